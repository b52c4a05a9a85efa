#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a host description for libvirt's test driver (test:///PATH) with N
running domains of V vCPUs, each annotated for llcd (mode aggregate), for
the scale test and bench. Usage: test_driver_host.py N V OUT.xml"""
import sys

n, v, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(out, "w") as f:
    f.write("<node>\n<cpu><mhz>2000</mhz><model>x86_64</model><active>512</active>"
            "<nodes>2</nodes><sockets>2</sockets><cores>128</cores><threads>2</threads></cpu>\n"
            "<memory>1073741824</memory>\n")
    for i in range(n):
        f.write(f"<domain type='test'><name>s{i:04d}</name>"
                f"<uuid>6695eb01-f6a4-8304-79aa-{i:012x}</uuid>"
                "<metadata><llc-policy xmlns='urn:llcd:llc-policy:1' mode='aggregate'/></metadata>"
                f"<memory>1048576</memory><vcpu placement='static'>{v}</vcpu>"
                "<os><type arch='x86_64'>hvm</type></os></domain>\n")
    f.write("</node>\n")
