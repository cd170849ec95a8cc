/* The report of rf_simulate() as text a person reads: a side-by-side table, or an SVG bar chart
 * of the level distribution and the over-commitment (for a design document; it opens in a
 * browser). Pure: strings in memory. */
#ifndef RF_ALLOC_SIM_REPORT_H
#define RF_ALLOC_SIM_REPORT_H

#include <jansson.h>

/** The table (malloc'd, NUL-terminated); NULL on OOM. */
char *rf_sim_table(const json_t *report);

/** A standalone SVG document (malloc'd); NULL on OOM. */
char *rf_sim_svg(const json_t *report);

#endif
