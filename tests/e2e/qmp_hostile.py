#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/e2e/qmp_hostile.py - hostile QMP peers for e2e_qmp_backend: UNIX
# sockets where llcd's QMP back-end looks for QEMU, each misbehaving in one
# way, until killed.
#   qmp_hostile.py garbage:PATH silent:PATH liar:PATH ...
#   garbage  accepts and sends bytes that are not JSON
#   silent   accepts and never sends anything (no greeting)
#   liar     speaks QMP, but query-cpus-fast names thread-id 1 (init), a
#            thread of another process
import json
import os
import socket
import sys
import threading

GREETING = b'{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, "capabilities": []}}\r\n'


def liar(c):
    c.sendall(GREETING)
    f = c.makefile("rb")
    for line in f:              # libqmp ends each command with "\r\n"
        if not line.strip():
            continue
        msg = json.loads(line)
        cmd, mid = msg.get("execute"), msg.get("id")
        ret = {}
        if cmd == "query-cpus-fast":
            ret = [{"cpu-index": 0, "thread-id": 1, "qom-path": "/machine/unattached/device[0]",
                    "target": "x86_64", "props": {"socket-id": 0, "core-id": 0, "thread-id": 0}}]
        elif cmd == "query-name":
            ret = {"name": "liar"}
        out = {"return": ret}
        if mid is not None:
            out["id"] = mid
        c.sendall(json.dumps(out).encode() + b"\r\n")


def serve(mode, path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)          # silent: never closed, never answered
        try:
            if mode == "garbage":
                c.sendall(b"this is not QMP at all\n")
            elif mode == "liar":
                threading.Thread(target=liar, args=(c,), daemon=True).start()
        except OSError:
            pass


threads = []
for arg in sys.argv[1:]:
    mode, path = arg.split(":", 1)
    t = threading.Thread(target=serve, args=(mode, path), daemon=True)
    t.start()
    threads.append(t)
for t in threads:
    t.join()
