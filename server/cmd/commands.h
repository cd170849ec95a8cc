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

/* The logging flags of every command (DESIGN section 3): --log-format text|json and klog's
 * verbosity in all its spellings, -v N, -v=N, --v=N, --v N, in any order. Put RF_LOG_OPTIONS in
 * the command's long options, "v:" in its short ones, and hand both answers to rf_cmd_log_flag().
 */
#define RF_OPT_LOG_FORMAT 0x101
#define RF_LOG_OPTIONS                                                                             \
	{ "log-format", required_argument, NULL, RF_OPT_LOG_FORMAT },                              \
	{                                                                                          \
		"v", required_argument, NULL, 'v'                                                  \
	}
#define RF_LOG_USAGE                                                                               \
	"  --log-format F    logs on stderr as text (klog, the default) or json\n"                 \
	"  -v N              log verbosity (also -v=N, --v=N; 2 = one line per request)\n"

/** Handle getopt's answer c for RF_LOG_OPTIONS: 0, or 2 after saying what was wrong. */
int rf_cmd_log_flag(const char *cmd, int c, const char *arg);

/** -o VALUE: 0 when it is one of allowed (NULL-terminated), else 2 after
 * "railfit CMD: -o: expected a, b or c, got 'x'". */
int rf_cmd_output_flag(const char *cmd, const char *value, const char *const *allowed);

/** Read a whole file (bounded); -errno with a message naming the file. */
int rf_read_file(const char *path, size_t max, char **ret, size_t *ret_len, char *err,
		 size_t errlen);

/** Load --config F into *cfg (defaults when path is NULL); prints the error and returns 2 (or 1
 * on OOM) on failure, leaving *cfg released. */
int rf_load_config(const char *path, struct rf_config *cfg);

#endif
