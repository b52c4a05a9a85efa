// SPDX-License-Identifier: GPL-2.0-or-later
/* guestproto.h - the guest report protocol, version 1: the numbers both
 * sides share (llc-guest writes, agent/drivers/guestchan.c reads). The protocol
 * itself is described in docs/guest-channel.md.
 *
 * One JSON object per line, '\n'-terminated, at most GUESTPROTO_MAX_LINE
 * bytes including the newline:
 *   {"v":1,"t":12.345,"seq":7,"ncpus":8,"nllcs":2,"dropped":0,
 *    "procs":[{"name":"spin","pid":142,"threads":5,"busy_threads":4,
 *              "cpu_share":3.97,"vcpus":[0,2,4,6],"llcs":[0,1]}]}
 */
#ifndef LLCD_GUESTPROTO_H
#define LLCD_GUESTPROTO_H

#define GUESTPROTO_VERSION 1
#define GUESTPROTO_PORT "org.llcd.guest.0"      /* virtio-serial port name */
#define GUESTPROTO_MAX_LINE 4096                /* bytes, newline included */
#define GUESTPROTO_MAX_PROCS 16                 /* processes per line */
#define GUESTPROTO_MAX_NAME 255                 /* bytes of "name" (before sanitising) */

#endif
