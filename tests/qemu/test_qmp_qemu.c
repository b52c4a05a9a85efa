// SPDX-License-Identifier: GPL-2.0-or-later
/* test_qmp_qemu.c - libqmp against the real qemu-system-x86_64 (TCG, no
 * disk, stopped with -S): the vCPU thread IDs it reports are threads of
 * the QEMU process, and the topology properties match -smp
 * 8,sockets=1,dies=2,cores=2,threads=2.  Run through tests/qemu/run.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qmp.h"

#define T_MS 5000

struct vm {
	char dir[64];
	char sock[128];
	char log[128];
	pid_t pid;
	struct qmp *q;
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
dump_log(const struct vm *vm)
{
	char line[512];
	FILE *f = fopen(vm->log, "r");

	if (f == NULL)
		return;
	fprintf(stderr, "--- QEMU stderr (%s):\n", vm->log);
	while (fgets(line, sizeof(line), f) != NULL)
		fputs(line, stderr);
	fclose(f);
}

static int
start_vm(void **state)
{
	const char *qemu = getenv("QEMU") ? getenv("QEMU") : "qemu-system-x86_64";
	struct vm *vm = calloc(1, sizeof(*vm));
	struct llcd_err err;
	char qmparg[160];
	int i, status;

	snprintf(vm->dir, sizeof(vm->dir), "/tmp/llcd-qmp-XXXXXX");
	if (mkdtemp(vm->dir) == NULL)
		return -1;
	snprintf(vm->sock, sizeof(vm->sock), "%s/qmp.sock", vm->dir);
	snprintf(vm->log, sizeof(vm->log), "%s/qemu.log", vm->dir);
	snprintf(qmparg, sizeof(qmparg), "unix:%s,server=on,wait=off", vm->sock);
	vm->pid = fork();
	if (vm->pid == 0) {
		if (freopen(vm->log, "w", stderr) == NULL || freopen("/dev/null", "w", stdout) == NULL)
			_exit(126);
		execlp(qemu, qemu, "-accel", "tcg", "-display", "none", "-nodefaults",
		       "-no-user-config", "-m", "64", "-S",
		       "-smp", "8,sockets=1,dies=2,cores=2,threads=2",
		       "-qmp", qmparg, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", qemu, strerror(errno));
		_exit(127);
	}
	/* QEMU binds the socket, then listens: until then connect() fails
	 * (ENOENT, ECONNREFUSED).  Retry for up to 10 s. */
	vm->q = qmp_new();
	for (i = 0;; i++) {
		if (waitpid(vm->pid, &status, WNOHANG) == vm->pid) {
			fprintf(stderr, "FAILED: QEMU exited (status 0x%x) before its QMP socket "
			        "was ready\n", status);
			dump_log(vm);
			return -1;
		}
		if (qmp_connect_start(vm->q, vm->sock, &err) == 0)
			break;
		if (i == 200) {
			fprintf(stderr, "FAILED: %s\n", err.msg);
			dump_log(vm);
			return -1;
		}
		sleep_ms(50);
	}
	if (qmp_handshake(vm->q, T_MS, &err) == -1) {
		fprintf(stderr, "FAILED: %s\n", err.msg);
		dump_log(vm);
		return -1;
	}
	*state = vm;
	return 0;
}

static int
stop_vm(void **state)
{
	struct vm *vm = *state;

	if (vm == NULL)
		return 0;
	qmp_free(vm->q);
	if (vm->pid > 0 && waitpid(vm->pid, NULL, WNOHANG) == 0) {
		kill(vm->pid, SIGKILL);
		waitpid(vm->pid, NULL, 0);
	}
	unlink(vm->sock);
	unlink(vm->log);
	rmdir(vm->dir);
	free(vm);
	return 0;
}

static void
test_greeting(void **state)
{
	struct vm *vm = *state;
	int maj, min, mic;

	qmp_version(vm->q, &maj, &min, &mic);
	printf("# QEMU %d.%d.%d (%s)\n", maj, min, mic, qmp_package(vm->q));
	assert_true(maj >= 7);
	assert_int_equal(qmp_state(vm->q), QMP_STATE_READY);
}

static void
test_vcpu_threads(void **state)
{
	struct vm *vm = *state;
	struct qmp_cpus *c;
	struct llcd_err err;
	size_t i;

	if (qmp_query_cpus_fast(vm->q, T_MS, &c, &err) != QMP_OK)
		fail_msg("query-cpus-fast: %s", err.msg);
	assert_int_equal(c->n, 8);
	for (i = 0; i < c->n; i++) {
		const struct qmp_cpu *cpu = &c->cpu[i];
		char path[128], comm[64] = "";
		struct stat st;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)vm->pid, (int)cpu->tid);
		if (stat(path, &st) != 0)
			fail_msg("vCPU %d: thread %d is not a thread of QEMU (pid %d): %s",
			         cpu->cpu_index, (int)cpu->tid, (int)vm->pid, strerror(errno));
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)vm->pid, (int)cpu->tid);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(comm, sizeof(comm), f) == NULL)
				comm[0] = '\0';
			fclose(f);
		}
		comm[strcspn(comm, "\n")] = '\0';
		printf("# vCPU %d: tid %d (%s) socket %d die %d core %d thread %d\n",
		       cpu->cpu_index, (int)cpu->tid, comm, cpu->props.socket_id,
		       cpu->props.die_id, cpu->props.core_id, cpu->props.thread_id);
		assert_int_equal(cpu->cpu_index, (int)i);
		assert_int_equal(cpu->props.socket_id, 0);
		assert_int_equal(cpu->props.die_id, (int)i / 4);
		assert_int_equal(cpu->props.core_id, (int)(i / 2) % 2);
		assert_int_equal(cpu->props.thread_id, (int)i % 2);
		assert_int_equal(cpu->tid == vm->pid, 0);     /* not the main thread */
		assert_string_equal(cpu->target, "x86_64");
	}
	qmp_cpus_free(c);
}

static void
test_hotpluggable_match(void **state)
{
	struct vm *vm = *state;
	struct qmp_hotcpus *h;
	struct qmp_cpus *c;
	struct llcd_err err;
	size_t i, j;

	assert_int_equal(qmp_query_cpus_fast(vm->q, T_MS, &c, &err), QMP_OK);
	if (qmp_query_hotpluggable_cpus(vm->q, T_MS, &h, &err) != QMP_OK)
		fail_msg("query-hotpluggable-cpus: %s", err.msg);
	assert_int_equal(h->n, 8);
	/* every slot is plugged, by the vCPU with the same qom-path and props */
	for (i = 0; i < h->n; i++) {
		assert_non_null(h->cpu[i].qom_path);
		for (j = 0; j < c->n; j++)
			if (strcmp(h->cpu[i].qom_path, c->cpu[j].qom_path) == 0)
				break;
		assert_true(j < c->n);
		assert_memory_equal(&h->cpu[i].props, &c->cpu[j].props, sizeof(h->cpu[i].props));
	}
	qmp_hotcpus_free(h);
	qmp_cpus_free(c);
}

static void
test_errors_and_events(void **state)
{
	struct vm *vm = *state;
	struct json_object *ret, *ev;
	struct llcd_err err;
	int status;

	assert_int_equal(qmp_execute(vm->q, "no-such-command", NULL, T_MS, &ret, &err),
	                 QMP_ERR_COMMAND);
	assert_string_equal(err.msg, "no-such-command: CommandNotFound: "
	                    "The command no-such-command has not been found");
	json_object_put(ret);
	assert_int_equal(qmp_execute(vm->q, "cont", NULL, T_MS, NULL, &err), QMP_OK);
	assert_int_equal(qmp_event_wait(vm->q, T_MS, &ev, &err), QMP_OK);
	assert_string_equal(qmp_event_name(ev), "RESUME");
	json_object_put(ev);
	assert_int_equal(qmp_execute(vm->q, "stop", NULL, T_MS, NULL, &err), QMP_OK);
	assert_int_equal(qmp_event_wait(vm->q, T_MS, &ev, &err), QMP_OK);
	assert_string_equal(qmp_event_name(ev), "STOP");
	json_object_put(ev);
	assert_int_equal(qmp_execute(vm->q, "quit", NULL, T_MS, NULL, &err), QMP_OK);
	assert_int_equal(qmp_event_wait(vm->q, T_MS, &ev, &err), QMP_OK);
	assert_string_equal(qmp_event_name(ev), "SHUTDOWN");
	json_object_put(ev);
	assert_int_equal(qmp_event_wait(vm->q, T_MS, &ev, &err), QMP_ERR_CONN);
	assert_string_equal(err.msg, "QEMU closed the connection");
	assert_int_equal(waitpid(vm->pid, &status, 0), vm->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	vm->pid = 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_vcpu_threads),
		cmocka_unit_test(test_hotpluggable_match),
		cmocka_unit_test(test_errors_and_events),   /* last: quits QEMU */
	};
	return cmocka_run_group_tests(tests, start_vm, stop_vm);
}
