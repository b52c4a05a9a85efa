/* policy.c - the LLC placement engine (work in progress). */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

struct policy_plan *
policy_plan_new(void)
{
	return calloc(1, sizeof(struct policy_plan));
}

void
policy_plan_free(struct policy_plan *p)
{
	if (p == NULL)
		return;
	free(p->actions);
	free(p);
}

void
policy_plan_clear(struct policy_plan *p)
{
	p->n = 0;
}

/* --- temporary: the engine lands in the next commits ------------------ */
struct policy_state {
	struct policy_stats stats;
};

struct policy_state *
policy_state_new(void)
{
	return calloc(1, sizeof(struct policy_state));
}

void
policy_state_free(struct policy_state *s)
{
	free(s);
}

int
policy_step(struct policy_state *s, const struct policy_input *in,
            struct policy_plan *plan, struct llcd_err *err)
{
	(void)in;
	(void)err;
	policy_plan_clear(plan);
	s->stats.steps++;
	return 0;
}
