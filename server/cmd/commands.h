/* The commands of the railfit binary (DESIGN section 3) and the helpers they share. Each command
 * returns the process exit code: 0 ok, 1 runtime failure, 2 usage or configuration error.
 * rf_cmd_serve is in serve.c, rf_cmd_topology in topology_cmd.c,
 * rf_cmd_simulate in simulate.c, the rest in commands.c. */
#ifndef RF_SERVER_CMD_COMMANDS_H
#define RF_SERVER_CMD_COMMANDS_H

#include <stddef.h>

#include "config/config.h"

int rf_cmd_serve(int argc, char **argv);
int rf_cmd_explain(int argc, char **argv);
int rf_cmd_gen_cluster(int argc, char **argv);
int rf_cmd_version(int argc, char **argv);
int rf_cmd_topology(int argc, char **argv);
int rf_cmd_simulate(int argc, char **argv);

/** Read a whole file (bounded); -errno with a message naming the file. */
int rf_read_file(const char *path, size_t max, char **ret, size_t *ret_len, char *err,
		 size_t errlen);

/** Load --config F into *cfg (defaults when path is NULL); prints the error and returns 2 (or 1
 * on OOM) on failure, leaving *cfg released. */
int rf_load_config(const char *path, struct rf_config *cfg);

#endif
