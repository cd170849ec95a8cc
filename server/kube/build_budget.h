/* The store publisher's CPU budget for building generations: a token bucket of build seconds.
 * Builds take at most a share of a core over time (a third), but one long build (a layout built
 * in full: ~0.4 s at 5,000 nodes) does not hold back the cheap builds that follow it, as spacing
 * every build by twice the last one's duration did (0.8 s more for each event that came during
 * it, so a generation more than a second behind the watch). Pure: the caller passes the clock
 * (seconds) and the builds' durations. */
#ifndef RF_SERVER_BUILD_BUDGET_H
#define RF_SERVER_BUILD_BUDGET_H

struct rf_build_budget {
	double share;  /* of a core that builds may take over time */
	double burst;  /* seconds of build the bucket holds; also the most it may owe */
	double tokens; /* seconds of build available at `at` (negative: owed) */
	double at;
};

#define RF_BUILD_SHARE 0.33 /* of a core */
#define RF_BUILD_BURST 1.0  /* seconds: two full layout builds at 5,000 nodes */

/** A full bucket at time now. */
void rf_build_budget_init(struct rf_build_budget *b, double share, double burst, double now);

/** A build that took dur seconds ended at now: its time is spent (the bucket refills during
 * it, and owes at most burst). */
void rf_build_budget_spend(struct rf_build_budget *b, double dur, double now);

/** Work that may use the bucket's spare time only (a compaction, which no event waits for): dur
 * seconds ended at now spent from what the bucket holds, never making it owe (the builds of
 * events after it do not wait for it). */
void rf_build_budget_spend_spare(struct rf_build_budget *b, double dur, double now);

/** When the bucket will hold need seconds (at most its burst), at or after now: work paid from
 * the spare only (a compaction) starts then, so that it leaves the builds of events after it
 * what they need. */
double rf_build_budget_ready_for(const struct rf_build_budget *b, double need, double now);

/** When the next build may start, at or after now: once the bucket owes nothing. */
double rf_build_budget_ready_at(const struct rf_build_budget *b, double now);

#endif
