/* railfit's version document. */
#ifndef RF_SERVER_VERSION_H
#define RF_SERVER_VERSION_H

#include <jansson.h>

/** {"version","commit","libraries":{...}}. New reference, NULL on OOM. */
json_t *rf_version_json(void);

#endif
