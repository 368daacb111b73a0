// Jobs foreseen to arrive (issue 29). A start forecast that knows only the jobs already queued is
// early wherever later jobs may overtake: under the rota policy a job of a user with less usage,
// a smaller or a higher-tier one goes first. What the lab submits next is foreseen as what it
// submitted last: the jobs of the last `period` (a week: the lab's days of the week and hours of
// the day, its users, their sizes and limits) come again, shifted by one period, up to `horizon`.
// A persistence forecast: no rate is fitted, nothing assumed about the shape of a week; a day's
// period and several past periods' median were measured and did worse (docs/benchmarks.md,
// "Start forecasts"). Pure. Tested by arrivals_test.cc.
#pragma once

#include <vector>

#include "core/cluster.h"
#include "core/policy.h"

namespace rota {

struct ArrivalOptions {
  Duration period = kWeek;
  Duration horizon = kWeek;  // 0: none foreseen
};

// Whether a job that arrives later may start before one that waits, under this policy, so that
// forecasts need the arrivals: under the rota policy a later job of a higher tier, of a user with
// less fair-share usage or a shorter one goes first. Fifo starts nothing behind a blocked job; EASY
// backfill lets a later job only into a hole, and foreseen arrivals made its forecasts worse on
// most replays (the play's passes spent on arrivals instead of ends).
bool ArrivalsOvertake(const Policy& policy);

// The jobs of `recent` submitted in (now - period, now] again, each k periods later (k >= 1) up to
// now + horizon, with ids from `first_id` up, sorted by submit time: what came in the last period
// comes in the next, and a job of exactly one period ago is not foreseen again now, beside the one
// that just came in its place. Each is the job as it was asked for (user, project, tier, request,
// limit, name), with no dependencies.
std::vector<Job> RepeatArrivals(const std::vector<Job>& recent, Time now, JobId first_id,
                                const ArrivalOptions& options = {});

}  // namespace rota
