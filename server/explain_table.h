/* The explain document rendered for people. */
#ifndef RF_SERVER_EXPLAIN_TABLE_H
#define RF_SERVER_EXPLAIN_TABLE_H

#include <jansson.h>

/** Render an explain document (alloc/explain.h) as a table. malloc'd string, NULL on OOM. */
char *rf_explain_table(const json_t *explain);

#endif
