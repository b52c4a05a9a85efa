// SPDX-License-Identifier: GPL-2.0-or-later
/* qmp_fake.c - a fake QMP server replaying a recorded transcript. */
#include "qmp_fake.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

struct qmp_fake {
	pthread_t thread;
	int fd;
	enum qmp_fake_mode mode;
	int close_at_end;
	char **lines;
	size_t nlines;
	char inbuf[1 << 20];
	size_t inlen;
	char err[512];
};

static void
pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
send_msgs(struct qmp_fake *f, const char *buf, size_t len)
{
	size_t off = 0, piece = 1;

	if (f->mode != QMP_FAKE_SPLIT)
		return write_all(f->fd, buf, len);
	while (off < len) {
		size_t n = len - off < piece ? len - off : piece;

		if (write_all(f->fd, buf + off, n) == -1)
			return -1;
		off += n;
		piece = piece % 13 + 1;        /* 1, 2, ... 13, 1, ... bytes */
		pause_us(100);
	}
	return 0;
}

/* Read one '\n'-terminated line from the client (5 s limit). */
static char *
read_line(struct qmp_fake *f)
{
	for (;;) {
		char *nl = memchr(f->inbuf, '\n', f->inlen);
		struct pollfd pfd = { f->fd, POLLIN, 0 };
		ssize_t r;

		if (nl != NULL) {
			size_t n = (size_t)(nl - f->inbuf) + 1;
			char *line = strndup(f->inbuf, n);

			memmove(f->inbuf, f->inbuf + n, f->inlen - n);
			f->inlen -= n;
			return line;
		}
		if (f->inlen == sizeof(f->inbuf) || poll(&pfd, 1, 5000) != 1)
			return NULL;
		r = read(f->fd, f->inbuf + f->inlen, sizeof(f->inbuf) - f->inlen);
		if (r <= 0)
			return NULL;
		f->inlen += (size_t)r;
	}
}

static void *
run(void *arg)
{
	struct qmp_fake *f = arg;
	char *out = NULL;
	size_t i, outlen = 0;

	for (i = 0; i < f->nlines; i++) {
		const char *l = f->lines[i];

		if (l[0] == '<') {
			size_t n = strlen(l + 2);

			out = realloc(out, outlen + n + 2);
			memcpy(out + outlen, l + 2, n);
			memcpy(out + outlen + n, "\r\n", 2);
			outlen += n + 2;
			/* flush now unless coalescing with the next server line */
			if (f->mode != QMP_FAKE_COALESCE || i + 1 == f->nlines ||
			    f->lines[i + 1][0] != '<') {
				if (send_msgs(f, out, outlen) == -1) {
					snprintf(f->err, sizeof(f->err), "line %zu: write failed", i + 1);
					goto done;
				}
				outlen = 0;
			}
		} else if (l[0] == '>') {
			struct json_object *want, *got;
			char *line = read_line(f);
			int same;

			if (line == NULL) {
				snprintf(f->err, sizeof(f->err), "line %zu: client sent nothing, "
				         "expected %s", i + 1, l + 2);
				goto done;
			}
			want = json_tokener_parse(l + 2);
			got = json_tokener_parse(line);
			same = want != NULL && json_object_equal(want, got);
			if (!same)
				snprintf(f->err, sizeof(f->err), "line %zu: client sent %s, expected %s",
				         i + 1, line, l + 2);
			json_object_put(want);
			json_object_put(got);
			free(line);
			if (!same)
				goto done;
		}
	}
	if (!f->close_at_end) {
		char *line = read_line(f);   /* NULL at EOF (or after 5 s) */

		if (line != NULL)
			snprintf(f->err, sizeof(f->err), "client sent more than the transcript: %s",
			         line);
		free(line);
	}
done:
	free(out);
	shutdown(f->fd, SHUT_RDWR);
	return NULL;
}

struct qmp_fake *
qmp_fake_start(const char *transcript, enum qmp_fake_mode mode, int close_at_end,
               int *client_fd)
{
	struct qmp_fake *f = calloc(1, sizeof(*f));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp;
	int sv[2];

	if (f == NULL)
		return NULL;
	fp = fopen(transcript, "r");
	if (fp == NULL) {
		free(f);
		return NULL;
	}
	while ((n = getline(&line, &cap, fp)) != -1) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if ((line[0] == '<' || line[0] == '>') && line[1] == ' ') {
			f->lines = realloc(f->lines, (f->nlines + 1) * sizeof(*f->lines));
			f->lines[f->nlines++] = strdup(line);
		}
	}
	free(line);
	fclose(fp);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		abort();
	f->fd = sv[0];
	f->mode = mode;
	f->close_at_end = close_at_end;
	*client_fd = sv[1];
	if (pthread_create(&f->thread, NULL, run, f) != 0)
		abort();
	return f;
}

int
qmp_fake_join(struct qmp_fake *f, char *msg, size_t size)
{
	size_t i;
	int rc;

	pthread_join(f->thread, NULL);
	rc = f->err[0] == '\0' ? 0 : -1;
	snprintf(msg, size, "%s", f->err);
	close(f->fd);
	for (i = 0; i < f->nlines; i++)
		free(f->lines[i]);
	free(f->lines);
	free(f);
	return rc;
}
