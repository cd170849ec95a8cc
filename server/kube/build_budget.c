/* The publisher's token bucket of build seconds (see build_budget.h). */
#include "server/kube/build_budget.h"

void
rf_build_budget_init(struct rf_build_budget *b, double share, double burst, double now)
{
	*b = (struct rf_build_budget){ .share = share, .burst = burst, .tokens = burst, .at = now };
}

/* The bucket at time now (refilled at share seconds per second, up to burst). */
static double
tokens_at(const struct rf_build_budget *b, double now)
{
	double t = b->tokens + (now > b->at ? now - b->at : 0) * b->share;
	return t > b->burst ? b->burst : t;
}

void
rf_build_budget_spend(struct rf_build_budget *b, double dur, double now)
{
	double t = tokens_at(b, now) - (dur > 0 ? dur : 0);
	b->tokens = t < -b->burst ? -b->burst : t;
	b->at = now;
}

void
rf_build_budget_spend_spare(struct rf_build_budget *b, double dur, double now)
{
	double had = tokens_at(b, now), t = had - (dur > 0 ? dur : 0);
	b->tokens = had < 0 ? had : t < 0 ? 0 : t;
	b->at = now;
}

double
rf_build_budget_ready_at(const struct rf_build_budget *b, double now)
{
	double t = tokens_at(b, now);
	return t >= 0 ? now : now - t / b->share;
}

double
rf_build_budget_ready_for(const struct rf_build_budget *b, double need, double now)
{
	if (need > b->burst)
		need = b->burst;
	double t = tokens_at(b, now);
	return t >= need ? now : now + (need - t) / b->share;
}
