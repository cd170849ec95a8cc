/* railfit: a kube-scheduler extender that steers GPU pods to aligned GPUs and NICs with
 * bandwidth left (DESIGN.md). main() initialises the libraries once, before any thread, and
 * dispatches to the command. */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "server/cmd/commands.h"
#include "server/http/log.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: railfit COMMAND [options]\n\n"
		"commands:\n"
		"  serve        run the scheduler extender (--snapshot F or --demo)\n"
		"  explain      offline: per node verdict, predicted devices, alignment, score\n"
		"  topology     GPU x NIC locality of this machine (hwloc), the node annotation\n"
		"  gen-cluster  write a synthetic cluster snapshot\n"
		"  simulate     replay pending pods without and with railfit, compare the placements\n"
		"  version      version, git commit, library versions\n\n"
		"Run 'railfit COMMAND --help' for the options of a command.\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	json_object_seed(0);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fprintf(stderr, "railfit: cannot initialise libcurl\n");
		return 1;
	}
	rf_log_setup(RF_LOG_TEXT, 0);
	int rc;
	if (strcmp(cmd, "serve") == 0)
		rc = rf_cmd_serve(argc - 1, argv + 1);
	else if (strcmp(cmd, "explain") == 0)
		rc = rf_cmd_explain(argc - 1, argv + 1);
	else if (strcmp(cmd, "gen-cluster") == 0)
		rc = rf_cmd_gen_cluster(argc - 1, argv + 1);
	else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		rc = rf_cmd_version(argc - 1, argv + 1);
	else if (strcmp(cmd, "simulate") == 0)
		rc = rf_cmd_simulate(argc - 1, argv + 1);
	else if (strcmp(cmd, "topology") == 0)
		rc = rf_cmd_topology(argc - 1, argv + 1);
	else {
		fprintf(stderr, "railfit: unknown command '%s'\n\n", cmd);
		usage(stderr);
		rc = 2;
	}
	curl_global_cleanup();
	return rc;
}
