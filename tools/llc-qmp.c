// SPDX-License-Identifier: GPL-2.0-or-later
/* llc-qmp.c - llc-qmp: send QMP commands to a QEMU monitor socket and print the replies. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "qmp.h"

enum { EXIT_CMDERR = 1, EXIT_USAGE = 2, EXIT_CONN = 3 };

/* the options, once: getopt's tables and the help are built from them */
static const struct cliopt options[] = {
	{ 't', "timeout", "MS", "time limit for connecting and for each command\n(default 5000)" },
	{ 'c', "compact", NULL, "print JSON on one line" },
	{ 'e', "events", NULL, "also print the events QEMU sends, as they arrive" },
	{ 'w', "wait-event", "NAME", "after the last command, wait for event NAME" },
	{ 'T', "transcript", "FILE", "append every message, as sent and received, to\n"
	  "FILE: '> ' lines to QEMU, '< ' lines from QEMU" },
	{ 'h', "help", NULL, "show this help" },
	CLIOPT_END
};

static void
usage(FILE *f)
{
	fputs("usage: llc-qmp [OPTIONS] SOCKET COMMAND [JSON-ARGS]\n"
	      "       llc-qmp [OPTIONS] SOCKET -\n"
	      "\n"
	      "Connect to the QMP monitor socket SOCKET of a QEMU (made with\n"
	      "-qmp unix:SOCKET,server=on,wait=off), negotiate capabilities, run COMMAND\n"
	      "with the JSON object JSON-ARGS as its arguments and pretty-print the\n"
	      "\"return\" value on stdout.  With '-' instead of COMMAND, read one\n"
	      "\"COMMAND [JSON-ARGS]\" per line from stdin and run them in order ('#'\n"
	      "starts a comment line).\n"
	      "\n", f);
	cliopt_help(options, f);
	fputs("\n"
	      "Examples:\n"
	      "  llc-qmp /run/vm.qmp query-cpus-fast\n"
	      "  llc-qmp /run/vm.qmp query-status\n"
	      "  llc-qmp /run/vm.qmp qom-get '{\"path\": \"/machine\", \"property\": \"type\"}'\n"
	      "\n"
	      "Exit status: 0 success, 1 QEMU answered a command with an error (printed\n"
	      "on stderr as CLASS: description), 2 usage error, 3 connection failed,\n"
	      "protocol error or timeout.\n", f);
}

struct opts {
	int timeout_ms;
	int json_flags;
	int events;
	const char *wait_event;
	FILE *transcript;
	int wait_seen;          /* the --wait-event event has arrived */
};

static void
trace(void *arg, enum qmp_dir dir, const char *msg, size_t len)
{
	FILE *f = arg;

	fprintf(f, "%c %.*s\n", dir == QMP_DIR_IN ? '<' : '>', (int)len, msg);
	fflush(f);
}

static void
print_events(struct qmp *q, struct opts *o)
{
	struct json_object *ev;

	while ((ev = qmp_event_next(q)) != NULL) {
		if (o->wait_event != NULL && strcmp(qmp_event_name(ev), o->wait_event) == 0)
			o->wait_seen = 1;
		if (o->events)
			printf("%s\n", json_object_to_json_string_ext(ev, o->json_flags));
		json_object_put(ev);
	}
}

/* Run one command; returns an exit status. */
static int
run(struct qmp *q, struct opts *o, const char *cmd, const char *argstr)
{
	struct json_object *args = NULL, *ret = NULL;
	enum json_tokener_error jerr;
	struct llcd_err err;
	enum qmp_rc rc;
	int status = 0;

	if (argstr != NULL && argstr[0] != '\0') {
		args = json_tokener_parse_verbose(argstr, &jerr);
		if (args == NULL || !json_object_is_type(args, json_type_object)) {
			fprintf(stderr, "llc-qmp: %s: arguments must be a JSON object%s%s\n", cmd,
			        args == NULL ? ": " : "",
			        args == NULL ? json_tokener_error_desc(jerr) : "");
			json_object_put(args);
			return EXIT_USAGE;
		}
	}
	rc = qmp_execute(q, cmd, args, o->timeout_ms, &ret, &err);
	print_events(q, o);
	switch (rc) {
	case QMP_OK:
		printf("%s\n", json_object_to_json_string_ext(ret, o->json_flags));
		break;
	case QMP_ERR_COMMAND:
		fprintf(stderr, "llc-qmp: %s\n", err.msg);
		status = EXIT_CMDERR;
		break;
	default:
		fprintf(stderr, "llc-qmp: %s\n", err.msg);
		status = EXIT_CONN;
		break;
	}
	fflush(stdout);
	json_object_put(args);
	json_object_put(ret);
	return status;
}

static int
run_stdin(struct qmp *q, struct opts *o)
{
	char line[65536];
	int status = 0;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *cmd = line, *args, *end;
		int s;

		end = cmd + strlen(cmd);
		while (end > cmd && strchr(" \t\r\n", end[-1]) != NULL)
			*--end = '\0';
		cmd += strspn(cmd, " \t");
		if (*cmd == '\0' || *cmd == '#')
			continue;
		args = cmd + strcspn(cmd, " \t");
		if (*args != '\0') {
			*args++ = '\0';
			args += strspn(args, " \t");
		}
		s = run(q, o, cmd, args);
		if (s == EXIT_CONN || s == EXIT_USAGE)
			return s;
		if (s != 0)
			status = s;
	}
	return status;
}

static int
wait_event(struct qmp *q, const struct opts *o)
{
	struct json_object *ev;
	struct llcd_err err;

	if (o->wait_seen)
		return 0;
	for (;;) {
		enum qmp_rc rc = qmp_event_wait(q, o->timeout_ms, &ev, &err);
		int match;

		if (rc != QMP_OK) {
			fprintf(stderr, "llc-qmp: waiting for event %s: %s\n", o->wait_event, err.msg);
			return EXIT_CONN;
		}
		match = strcmp(qmp_event_name(ev), o->wait_event) == 0;
		if (o->events)
			printf("%s\n", json_object_to_json_string_ext(ev, o->json_flags));
		json_object_put(ev);
		if (match)
			return 0;
	}
}

int
main(int argc, char **argv)
{
	struct cliopt_parser co;
	struct opts o = { 5000, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE, 0, NULL, NULL, 0 };
	struct llcd_err err;
	struct qmp *q;
	char *end;
	long l;
	int c, status;

	cliopt_build(&co, "llc-qmp", options, false);
	while ((c = cliopt_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 't':
			l = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || l < 0 || l > INT_MAX) {
				fprintf(stderr, "llc-qmp: bad timeout '%s' (milliseconds)\n", optarg);
				return EXIT_USAGE;
			}
			o.timeout_ms = (int)l;
			break;
		case 'c':
			o.json_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
			break;
		case 'e':
			o.events = 1;
			break;
		case 'w':
			o.wait_event = optarg;
			break;
		case 'T':
			if (o.transcript != NULL)
				fclose(o.transcript);
			o.transcript = fopen(optarg, "a");
			if (o.transcript == NULL) {
				perror(optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind < 2 || argc - optind > 3) {
		usage(stderr);
		return EXIT_USAGE;
	}
	q = qmp_new();
	if (q == NULL) {
		fprintf(stderr, "llc-qmp: out of memory\n");
		return EXIT_CONN;
	}
	if (o.transcript != NULL)
		qmp_set_trace(q, trace, o.transcript);
	if (qmp_connect(q, argv[optind], o.timeout_ms, &err) == -1) {
		fprintf(stderr, "llc-qmp: %s\n", err.msg);
		status = EXIT_CONN;
	} else if (strcmp(argv[optind + 1], "-") == 0 && argc - optind == 2) {
		status = run_stdin(q, &o);
	} else {
		status = run(q, &o, argv[optind + 1], argc - optind == 3 ? argv[optind + 2] : NULL);
	}
	if (o.wait_event != NULL && (status == 0 || status == EXIT_CMDERR)) {
		int s = wait_event(q, &o);

		if (s != 0)
			status = s;
	}
	qmp_free(q);
	if (o.transcript != NULL)
		fclose(o.transcript);
	return status;
}
