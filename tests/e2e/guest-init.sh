#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the e2e test guests (packed by e2e_initramfs in tests/e2e/lib.sh).
#
# Runs as PID 1 in a busybox initramfs under a Debian cloud kernel and talks
# to the host only through the serial console, in lines the host parses:
#
#   E2E: <free text>                       progress; "E2E: ready" at the end
#   E2E-CPU vendor=<id> family=<n> model=<n> name=<model name>
#   E2E-TOPO cpu=<n> pkg=<n> die=<n> core=<n> smt=<list> l3=<list> l3id=<n> node=<n>
#   E2E-L3 <list>                          one line per distinct L3 domain
#   E2E-SMT <list>                         one line per distinct core
#   E2E-NUMA node=<n> cpus=<list> mem_kb=<n>   one line per NUMA node
#   E2E-SCHED cpu=<n> domains=<names>      the guest scheduler's domains (SMT,MC,DIE,...)
#   E2E-PORT name=<virtio-serial name> dev=/dev/vportNpM
#   E2E-BUSY cpu=<n> pid=<pid>
#
# Kernel command line switches:
#   llcd.busy=0,2-3   start one CPU busy loop pinned (taskset) on each listed CPU
#   llcd.run=0        do not start /etc/llcd-e2e/run even if it exists
#   llcd.poweroff=1   power off once /etc/llcd-e2e/run exits (or at once
#                     after "ready" when there is none)
#   llcd.hello=NAME   write one line "E2E-HELLO port=NAME cpus=N" to the
#                     virtio-serial port NAME, in the background (the write
#                     waits until the host connects), then close the port
#
# /etc/llcd-e2e/run, when present, is started in the background after the
# topology report, with its output on the console; "E2E: run exited rc=N"
# follows when it ends. The guest then idles until the host destroys it.

/bin/busybox mkdir -p /proc /sys /dev /tmp /run /bin /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin

up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "E2E: $*"; }

say "init reached uptime=$(up)"

busy=
hello=
run=1
off=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	llcd.busy=*) busy=${arg#llcd.busy=} ;;
	llcd.run=0) run=0 ;;
	llcd.poweroff=1) off=1 ;;
	llcd.hello=*) hello=${arg#llcd.hello=} ;;
	esac
done

# --- topology -------------------------------------------------------------
awk -F': *' '
	/^vendor_id/ && !v { v = $2 } /^cpu family/ && !f { f = $2 }
	/^model[ \t]*:/ && !m { m = $2 } /^model name/ && !n { n = $2 }
	END { printf "E2E-CPU vendor=%s family=%s model=%s name=%s\n", v, f, m, n }
' /proc/cpuinfo

rd() { cat "$1" 2>/dev/null || echo "$2"; }
node_of() {
	for n in "$1"/node[0-9]*; do
		[ -e "$n" ] && { echo "${n##*/node}"; return; }
	done
	echo none
}
ncpu=0
for c in /sys/devices/system/cpu/cpu[0-9]*; do
	[ -d "$c/topology" ] || continue
	t=$c/topology
	echo "E2E-TOPO cpu=${c##*/cpu} pkg=$(rd $t/physical_package_id -)" \
	     "die=$(rd $t/die_id 0) core=$(rd $t/core_id -)" \
	     "smt=$(rd $t/thread_siblings_list -)" \
	     "l3=$(rd $c/cache/index3/shared_cpu_list none)" \
	     "l3id=$(rd $c/cache/index3/id none) node=$(node_of $c)"
	ncpu=$((ncpu + 1))
done
nl3=0
for l in $(cat /sys/devices/system/cpu/cpu[0-9]*/cache/index3/shared_cpu_list 2>/dev/null | sort -u); do
	echo "E2E-L3 $l"
	nl3=$((nl3 + 1))
done
nsmt=0
for l in $(cat /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list | sort -u); do
	echo "E2E-SMT $l"
	nsmt=$((nsmt + 1))
done
for n in /sys/devices/system/node/node[0-9]*; do
	[ -d "$n" ] || continue
	echo "E2E-NUMA node=${n##*/node} cpus=$(rd $n/cpulist -)" \
	     "mem_kb=$(awk '/MemTotal/ { print $4 }' $n/meminfo 2>/dev/null)"
done
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for c in /sys/kernel/debug/sched/domains/cpu[0-9]*; do
	[ -d "$c" ] || continue
	names=
	for d in "$c"/domain[0-9]*; do
		[ -e "$d/name" ] && names="$names${names:+,}$(cat $d/name)"
	done
	echo "E2E-SCHED cpu=${c##*/cpu} domains=${names:-none}"
done
say "topology cpus=$ncpu online=$(rd /sys/devices/system/cpu/online -) l3=$nl3 cores=$nsmt uptime=$(up)"

# --- virtio-serial (module order matters: research/real-stack.md section 6) ---
ok=yes
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_console; do
	[ -e /lib/modules/$m.ko ] || { ok="no ($m.ko missing)"; break; }
	insmod /lib/modules/$m.ko 2>/tmp/insmod.err ||
		{ ok="no (insmod $m: $(cat /tmp/insmod.err))"; break; }
done
say "virtio modules loaded: $ok"
# the ports appear after the console device is probed and QEMU announces
# them: with a virtio console device (ID 0x0003), wait up to 5 s for them
for d in /sys/bus/virtio/devices/*; do
	[ "$(cat "$d/device" 2>/dev/null)" = 0x0003 ] || continue
	for _ in $(seq 50); do
		ls /sys/class/virtio-ports/*/name >/dev/null 2>&1 && break
		sleep 0.1
	done
done
for p in /sys/class/virtio-ports/*; do
	[ -e "$p/name" ] || continue
	name=$(cat $p/name)
	echo "E2E-PORT name=$name dev=/dev/${p##*/}"
	if [ "$name" = "$hello" ]; then
		(echo "E2E-HELLO port=$name cpus=$ncpu" >/dev/${p##*/} &&
			say "hello sent on $name") &
	fi
done

# --- busy loops -------------------------------------------------------------
for spec in $(echo "$busy" | tr , ' '); do
	case $spec in
	*-*) cpus=$(seq ${spec%-*} ${spec#*-}) ;;
	*) cpus=$spec ;;
	esac
	for cpu in $cpus; do
		if taskset -c "$cpu" true 2>/dev/null; then
			taskset -c "$cpu" sh -c 'while :; do :; done' &
			echo "E2E-BUSY cpu=$cpu pid=$!"
		else
			say "busy cpu=$cpu FAILED: no such CPU"
		fi
	done
done

# --- optional in-guest command ---------------------------------------------
if [ -x /etc/llcd-e2e/run ] && [ "$run" = 1 ]; then
	say "run start"
	(
		/etc/llcd-e2e/run
		say "run exited rc=$?"
		[ "$off" = 1 ] && poweroff -f
	) &
	off=0
fi

say "ready uptime=$(up)"
[ "$off" = 1 ] && poweroff -f
while :; do sleep 3600; done
