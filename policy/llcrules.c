// SPDX-License-Identifier: GPL-2.0-or-later
/* llcrules.c - Linux 7.2 cache-aware scheduling rules (see llcrules.h). */
#include "llcrules.h"

#include <limits.h>
#include <math.h>

int
llcrules_overaggr_pct(const struct llc_rules *r)
{
	if (r->overaggr_pct > 0)
		return r->overaggr_pct;
	/* kernel: 50, x3/2 when cpu_smt_num_threads == 1 */
	return r->smt > 1 ? 50 : 75;
}

bool
llcrules_fits(const struct llc_rules *r, double util, double cap)
{
	double lhs = util * 100.0, rhs = cap * llcrules_overaggr_pct(r);

	if (r->kernel)
		return lhs < rhs;
	return lhs <= rhs + 1e-9;
}

static bool
util_greater(const struct llc_rules *r, double a, double b)
{
	return a * 100.0 > b * (100.0 + r->imb_pct);
}

enum llc_mig
llcrules_can_migrate(const struct llc_rules *r, double src_util, double src_cap,
                double dst_util, double dst_cap, double tutil, bool to_pref)
{
	double s = src_util - tutil, d = dst_util + tutil;

	if (s < 0)
		s = 0;
	/* both LLCs busy: the generic balancer decides */
	if (!llcrules_fits(r, d, dst_cap) && !llcrules_fits(r, s, src_cap))
		return LLC_MIG_UNRESTRICTED;
	if (to_pref) {
		/* do not pull into a busy preferred LLC that would end busier */
		if (!llcrules_fits(r, d, dst_cap) && util_greater(r, d, s))
			return LLC_MIG_FORBID;
	} else {
		/* leave the preferred LLC only if it is busy and >imb% busier */
		if (llcrules_fits(r, s, src_cap) || !util_greater(r, s, d))
			return LLC_MIG_FORBID;
	}
	return LLC_MIG_LLC;
}

bool
llcrules_invalid_nr(const struct llc_rules *r, int nthreads, double nr_avg, int llc_weight)
{
	long scale;

	if (nthreads <= 1)
		return true;
	if (r->aggr_tolerance <= 0)
		return true;            /* tolerance 0: aggregation off */
	if (r->aggr_tolerance >= 100)
		return false;           /* no size guard */
	scale = 1 + (r->aggr_tolerance - 1);
	if (r->kernel)  /* !fits_capacity(nr * smt, scale * llc): c*1280 < m*1024 */
		return !(nr_avg * r->smt * 1280.0 < (double)scale * llc_weight * 1024.0);
	/* compared as reported, to a tenth of a busy thread: 1.0 busy
	 * threads do not exceed 1 PU, however the average was rounded */
	return lround(nr_avg * 10.0) * r->smt > scale * llc_weight * 10L;
}

bool
llcrules_size_guard(const struct llc_rules *r, int nthreads, double nr_avg, int llc_weight, bool guarded)
{
	long scale;

	if (!guarded || r->kernel || nthreads <= 1 || r->aggr_tolerance <= 0 || r->aggr_tolerance >= 100)
		return llcrules_invalid_nr(r, nthreads, nr_avg, llc_weight);
	scale = 1 + (r->aggr_tolerance - 1);
	/* leave only at or below LLC_GUARD_LEAVE_PCT % of the limit */
	return lround(nr_avg * 10.0) * r->smt * 100L > scale * llc_weight * 10L * LLC_GUARD_LEAVE_PCT;
}

double
llcrules_decay(double period_ms, double epoch_ms)
{
	if (epoch_ms <= 0)
		return 0.5;
	return pow(0.5, period_ms / epoch_ms);
}

int
llcrules_nr_avg_div(int llc_weight)
{
	int d = llc_weight >> 2;

	return d < 2 ? 2 : d > 8 ? 8 : d;
}

long
llcrules_nr_avg_kernel(long avg, long sample, int llc_weight)
{
	/* C division truncates toward zero, as div64_s64() does */
	return avg + (sample - avg) / llcrules_nr_avg_div(llc_weight);
}

bool
llcrules_should_switch(double best_occ, double cur_occ)
{
	return best_occ > 2.0 * cur_occ;
}
