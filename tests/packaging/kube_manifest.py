#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kube_manifest.py - packaging/kubernetes/llcd-daemonset.yaml, read with a
YAML parser (python3-yaml), for tests/packaging/test_kubevirt_image.sh:

  check MANIFEST
      the DaemonSet has what llcd needs on a KubeVirt node and says so:
      hostPID, privileged, the mounts (cgroup tree read-only, state,
      control socket, config), the metrics port with Prometheus's pod
      annotations, resource requests, a ConfigMap with llcd.conf; prints
      the ConfigMap's llcd.conf to stdout (the caller runs llcd -n on it)
  podman-args MANIFEST SCRATCH
      the podman run options that give a container exactly the DaemonSet's
      privileges and mounts, one per line: hostPath volumes of type
      DirectoryOrCreate are made under SCRATCH (a test must not create
      /var/lib/llcd or /run/llcd on its machine), other hostPaths are the
      machine's, the ConfigMap's files are written to SCRATCH/configmap/NAME
"""
import os
import sys

import yaml


def fail(msg):
    sys.stderr.write("kube_manifest: %s\n" % msg)
    sys.exit(1)


def load(path):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        fail("%s: %d DaemonSets, want 1" % (path, len(ds)))
    cms = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "ConfigMap"}
    return ds[0], cms


def container(ds):
    cs = ds["spec"]["template"]["spec"]["containers"]
    if len(cs) != 1:
        fail("%d containers, want 1" % len(cs))
    return cs[0]


def check(path):
    ds, cms = load(path)
    spec = ds["spec"]["template"]["spec"]
    c = container(ds)
    want = []
    if spec.get("hostPID") is not True:
        want.append("hostPID: true (the QEMU processes and the pods' roots)")
    if (c.get("securityContext") or {}).get("privileged") is not True:
        want.append("securityContext.privileged: true")
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for mp, ro in (("/sys/fs/cgroup", True), ("/var/lib/llcd", False), ("/run/llcd", False), ("/etc/llcd", True)):
        m = mounts.get(mp)
        if m is None:
            want.append("a volumeMount at %s" % mp)
            continue
        if bool(m.get("readOnly")) != ro:
            want.append("%s readOnly: %s" % (mp, ro))
        v = vols.get(m["name"])
        if v is None:
            want.append("a volume %s for %s" % (m["name"], mp))
        elif mp != "/etc/llcd" and (v.get("hostPath") or {}).get("path") != mp:
            want.append("%s from the node's %s (hostPath)" % (mp, mp))
    ports = [p for p in c.get("ports", []) if p.get("name") == "metrics"]
    ann = ds["spec"]["template"]["metadata"].get("annotations", {})
    if not ports:
        want.append("a container port named metrics")
    elif ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != str(ports[0]["containerPort"]):
        want.append("prometheus.io/scrape and prometheus.io/port annotations naming the metrics port")
    req = (c.get("resources") or {}).get("requests") or {}
    if "cpu" not in req or "memory" not in req:
        want.append("resources.requests cpu and memory")
    cm_vol = vols.get((mounts.get("/etc/llcd") or {}).get("name"), {}).get("configMap", {}).get("name")
    cm = cms.get(cm_vol)
    if cm is None or "llcd.conf" not in cm.get("data", {}):
        want.append("a ConfigMap %s with llcd.conf" % cm_vol)
    if want:
        fail("%s lacks: %s" % (path, "; ".join(want)))
    conf = cm["data"]["llcd.conf"]
    for port in ports:
        if ("metrics-listen *:%d" % port["containerPort"]) not in conf:
            fail("llcd.conf does not listen on the metrics port %d (metrics-listen *:%d)" %
                 (port["containerPort"], port["containerPort"]))
    sys.stdout.write(conf)


def podman_args(path, scratch):
    ds, cms = load(path)
    spec = ds["spec"]["template"]["spec"]
    c = container(ds)
    args = []
    if spec.get("hostPID"):
        args.append("--pid=host")
    if (c.get("securityContext") or {}).get("privileged"):
        args.append("--privileged")
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = vols[m["name"]]
        ro = ":ro" if m.get("readOnly") else ""
        if "hostPath" in v:
            hp = v["hostPath"]
            src = hp["path"]
            if hp.get("type") == "DirectoryOrCreate":
                src = os.path.join(scratch, "host" + src)
                os.makedirs(src, exist_ok=True)
            elif not os.path.isdir(src):
                fail("hostPath %s (type %s) does not exist here" % (src, hp.get("type")))
            args.append("--volume=%s:%s%s" % (src, m["mountPath"], ro))
        elif "configMap" in v:
            cm = cms[v["configMap"]["name"]]
            d = os.path.join(scratch, "configmap", cm["metadata"]["name"])
            os.makedirs(d, exist_ok=True)
            for k, text in cm.get("data", {}).items():
                with open(os.path.join(d, k), "w") as f:
                    f.write(text)
            args.append("--volume=%s:%s%s" % (d, m["mountPath"], ro))
        else:
            fail("volume %s: neither hostPath nor configMap" % m["name"])
    sys.stdout.write("\n".join(args) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "podman-args":
        podman_args(sys.argv[2], sys.argv[3])
    else:
        fail("usage: kube_manifest.py check MANIFEST | podman-args MANIFEST SCRATCH")
