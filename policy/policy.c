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
