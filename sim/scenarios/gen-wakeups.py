#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generate the wake-*.json scenarios: one per wakeup
pattern that is no sharing group (a dispatcher's star, a queue between
clients and servers, request/response pairs that share no data, a
work-stealing pool) and the real groups the rule must still find (two
groups joined by a weak link, a 64-thread barrier clique, an 8-vCPU VM
with busy I/O threads), each on a host with neither perf counters nor
bandwidth monitoring ("no judge") and, where a judge changes what llcd may
do, with counters (-counters) or bandwidth monitoring alone (-mbm).
Rerun after editing and commit the output:
    python3 sim/scenarios/gen-wakeups.py sim/scenarios
"""
import json
import os
import sys

POL = "<llc-policy xmlns='urn:llcd:llc-policy:1' mode='aggregate'/>"
HOST4 = "pack:1 [numa] l3:4 core:8 pu:2"       # 4 LLCs of 8 cores, 64 PUs
HOST8 = "pack:1 [numa] l3:8 core:8 pu:2"       # 8 CCXs, 128 PUs


def domain(name, vcpus, load, cores=None, **kw):
    d = {"name": name, "vcpus": vcpus,
         "guest_topology": {"sockets": 1, "dies": 1, "cores": cores or vcpus // 2,
                            "threads": 2 if not cores else vcpus // cores},
         "llc_policy": POL, "guest_helper": False,
         "load": [{"vcpus": "0-%d" % (vcpus - 1), "util": 0.02}] + load}
    d.update(kw)
    return d


def scenario(desc, domains, topology=HOST4, bw=40, duration=60, **host):
    h = {"topology": topology, "reserved_cpus": "", "llc_bw_gbs": bw, "wakeup_trace": True}
    h.update(host)
    return {"description": desc, "host": h, "period_ms": 100, "duration_s": duration,
            "seed": 1, "domains": domains}


def star():
    # vCPU 0 hands work to 5 workers and each reports back: 1,000 wakeups/s
    # out of the dispatcher (200/s a worker), 200/s back from each worker.
    load = [{"from_s": 2, "vcpus": "0", "util": 0.3,
             "wakes": [{"vcpus": "1-5", "hz": 1000}]},
            {"from_s": 2, "vcpus": "1-5", "util": 1.0, "group": "workers", "sharing": 0,
             "bw_gbs": 15, "wakes": [{"vcpus": "0", "hz": 200}]}]
    return ("A dispatcher waking 5 streaming workers (a star): vCPU 0 of a 32-vCPU guest "
            "hands out work, 1,000 wakeups/s spread over workers 1-5, each of which wakes it "
            "back 200 times a second; the workers never wake each other and share no data, "
            "but stream 15 GB/s each (an LLC sustains 40). Gathering the star on one LLC "
            "would cost the workers half their bandwidth.",
            [domain("disp", 32, load)], {})


def queue():
    # 4 clients and 4 servers meet at one queue: every request wakes some
    # server, every reply some client; nobody wakes its own side.
    load = [{"from_s": 2, "vcpus": "0-3", "util": 0.7, "group": "clients", "sharing": 0,
             "bw_gbs": 12, "wakes": [{"vcpus": "4-7", "hz": 600}]},
            {"from_s": 2, "vcpus": "4-7", "util": 0.7, "group": "servers", "sharing": 0,
             "bw_gbs": 12, "wakes": [{"vcpus": "0-3", "hz": 600}]}]
    return ("A bipartite queue: 4 clients (vCPUs 0-3) and 4 servers (4-7) of a 32-vCPU guest "
            "exchange requests through one shared queue, each waking a random member of the "
            "other side 600 times a second. No client talks to one server in particular, and "
            "they share no data; both sides stream 12 GB/s.",
            [domain("queue", 32, load)], {})


def rr_pairs():
    # 6 request/response pairs: real pairs by their wakeups (2,000/s each
    # way), but each side works on its own data (sharing 0) and streams.
    pairs = [(0, 9), (2, 19), (4, 25), (6, 15), (1, 30), (3, 12)]
    load = [{"from_s": 2, "vcpus": "%d,%d" % p, "util": 0.8, "group": "rr%d" % i,
             "sharing": 0, "bw_gbs": 13, "wakeups_hz": 2000} for i, p in enumerate(pairs)]
    return ("Request/response pairs that share no data: 6 pairs in a 32-vCPU guest wake each "
            "other 2,000 times a second (a pipe, an RPC), so the wakeup rule rightly sees 6 "
            "pairs, but each thread works on its own data and streams 13 GB/s: putting a pair "
            "on one LLC gains nothing and crowds the LLC's bandwidth.",
            [domain("rr", 32, load)], {})


def steal():
    # 8 workers of a work-stealing pool wake each other at random: the
    # wakeups of a barrier group, without the sharing.
    load = [{"from_s": 2, "vcpus": "1,5,9,13,17,21,25,29", "util": 1.0, "group": "pool",
             "sharing": 0, "bw_gbs": 8, "wakeups_hz": 800}]
    return ("An 8-worker work-stealing pool: the workers of a 32-vCPU guest wake idle peers "
            "to steal work, 800 times a second each to a random peer, the wakeup pattern of a "
            "barrier group; but each works on its own data and streams 8 GB/s (an LLC "
            "sustains 40): gathered, the pool runs at 0.6.",
            [domain("pool", 32, load)], {})


def weak_link():
    # two real 6-thread groups (sharing 1.04, 300 wakeups/s per thread) and
    # one stray pair between them at 10/s each way
    a, b = "0,2,4,6,8,10", "17,19,21,23,25,27"
    load = [{"from_s": 2, "vcpus": a, "util": 1.0, "group": "left", "sharing": 1.04,
             "bw_gbs": 0.5, "wakeups_hz": 300},
            {"from_s": 2, "vcpus": b, "util": 1.0, "group": "right", "sharing": 1.04,
             "bw_gbs": 0.5, "wakeups_hz": 300},
            {"from_s": 2, "vcpus": "10", "util": 0, "wakes": [{"vcpus": "17", "hz": 10}]},
            {"from_s": 2, "vcpus": "17", "util": 0, "wakes": [{"vcpus": "10", "hz": 10}]}]
    return ("Two real groups joined by a weak link: a 32-vCPU guest on an 8-CCX host runs two "
            "6-thread processes that share data (sharing 1.04) and wake each other 300 times a "
            "second per thread; one thread of each also wakes one of the other 10 times a second "
            "(a stray pipe). Each group fits an LLC; together they do not.",
            [domain("two", 32, load)], dict(topology=HOST8, bw=0))


def clique64():
    # a 64-thread barrier in a 128-vCPU guest on a 2 x 8-CCX host: too big
    # for an LLC (size guard), and it must stay one group, not fragments
    vc = "0-63"
    load = [{"from_s": 2, "vcpus": vc, "util": 0.9, "group": "bsp", "sharing": 0.3,
             "barrier": True, "bw_gbs": 0.2, "wakeups_hz": 1000}]
    return ("A 64-vCPU barrier clique at a 100 ms period: 64 threads of a 128-vCPU guest meet "
            "at a barrier and wake each other 1,000 times a second each (64 x 63 edges, about "
            "3,200 distinct ones a period), on a 2-socket host of 8-core CCXs. The group is "
            "far too big for one LLC; it must be seen whole and left alone, not cut into "
            "fragments that each chase an LLC.",
            [domain("bsp", 128, load)], dict(topology="pack:2 [numa] l3:8 core:8 pu:2", bw=0))


def iothreads():
    # an 8-vCPU VM (fits one 16-PU LLC: the whole domain is one group) whose
    # vCPUs share data, with two busy I/O threads beside it
    d = domain("vm", 8, [{"from_s": 2, "vcpus": "0-7", "util": 1.0, "group": "app",
                          "sharing": 1.04, "bw_gbs": 0.5}], cores=4)
    d["qemu_threads"] = [{"count": 2, "util": 0.6}, {"count": 3, "util": 0.01}]
    del d["guest_helper"]
    return ("An 8-vCPU VM whose vCPUs all share data (sharing 1.04) with two busy QEMU I/O "
            "threads (0.6 of a CPU each) and three idle ones, on an 8-CCX host. The VM fits "
            "one LLC, so llcd gathers it as one group; kernel-cas counts the I/O threads as "
            "threads of the process, and 10 busy threads exclude it for good.",
            [d], dict(topology=HOST8, bw=0))


def build(f, variant):
    desc, doms, host = f()
    host = dict(host)
    if variant == "counters":
        host["perf_counters"] = True
        desc += " The host has perf counters: the benefit check judges what llcd gathers."
    elif variant == "mbm":
        host["mbm"] = True
        desc += (" The host has no perf counters but resctrl bandwidth monitoring: the benefit "
                 "check judges by the domain's achieved bandwidth.")
    else:
        desc += (" The host has neither perf counters nor bandwidth monitoring: nothing can "
                 "judge a gathered group.")
    return scenario(desc, doms, **host)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, f, variants in [("wake-star", star, ["", "counters", "mbm"]),
                              ("wake-queue", queue, ["", "counters"]),
                              ("wake-rr-pairs", rr_pairs, ["", "counters", "mbm"]),
                              ("wake-steal", steal, ["", "counters", "mbm"]),
                              ("wake-weak-link", weak_link, ["", "counters"]),
                              ("wake-clique64", clique64, ["", "counters"]),
                              ("wake-iothreads", iothreads, [""])]:
        for v in variants:
            path = os.path.join(out, name + ("-" + v if v else "") + ".json")
            with open(path, "w") as fp:
                json.dump(build(f, v), fp, indent=1)
                fp.write("\n")


if __name__ == "__main__":
    main()
