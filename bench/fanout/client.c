// SSE load client for bench/fanout: one epoll loop, C connections opened gradually, every event
// parsed for the publish timestamp in its data ("ts":<epoch microseconds>), latency measured
// against CLOCK_REALTIME on the same machine. Built by bench/fanout/run.ts with `cc -O2`.
//
// usage: client HOST PORT PATH CONNECTIONS WARMUP_S WINDOW_S [MAX_INFLIGHT] [CONNECT_TIMEOUT_S]
// stdout: "connected N failed F ms T", then "measure" when the window starts, then one JSON line.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { S_CONNECTING, S_HEADERS, S_BODY, S_DEAD };
enum { C_SIZE, C_EXT, C_DATA, C_CRLF };

#define HDR_MAX 4096
#define BUCKET_US 100
#define BUCKETS 600000 /* 60 s of 100 us buckets */
#define MAX_RETRIES 5

typedef struct {
  int fd;
  uint8_t state, chunked, cstate, nl, pm, in_digits, has_ts, skip_line, retries;
  uint64_t crem, ts, ev_ts;
  uint32_t window_events;
  char *hdr;
  int hdr_len;
} conn_t;

static const char PATTERN[] = "\"ts\":";
static struct sockaddr_in addr;
static char request[1024];
static int request_len;
static int ep;
static conn_t *conns;
static int nconns;
static uint32_t *hist;
static uint64_t window_events, total_events, dropped_in_window, max_lat_us;
static int measuring;
static int inflight, next_to_open, established, failed;

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void open_conn(int i);

static void kill_conn(conn_t *c, int retry) {
  int i = (int)(c - conns);
  if (c->fd >= 0) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
  }
  c->fd = -1;
  free(c->hdr);
  c->hdr = NULL;
  if (c->state == S_CONNECTING || c->state == S_HEADERS) {
    inflight--;
    if (retry && c->retries < MAX_RETRIES) {
      c->retries++;
      open_conn(i);
      return;
    }
    failed++;
  } else if (c->state == S_BODY) {
    established--;
    if (measuring) dropped_in_window++;
  }
  c->state = S_DEAD;
}

static void open_conn(int i) {
  conn_t *c = &conns[i];
  uint8_t retries = c->retries;
  memset(c, 0, sizeof *c);
  c->retries = retries;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) {
    c->state = S_DEAD;
    failed++;
    return;
  }
  // close with RST: no TIME_WAIT, so repeated runs do not exhaust loopback ports
  struct linger lg = {1, 0};
  setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->state = S_CONNECTING;
  inflight++;
  int r = connect(c->fd, (struct sockaddr *)&addr, sizeof addr);
  if (r < 0 && errno != EINPROGRESS) {
    kill_conn(c, 1);
    return;
  }
  struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)i};
  epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
}

static void on_event_end(conn_t *c, uint64_t t) {
  total_events++;
  if (!measuring) return;
  window_events++;
  c->window_events++;
  uint64_t lat = t > c->ev_ts ? t - c->ev_ts : 0;
  if (lat > max_lat_us) max_lat_us = lat;
  uint64_t b = lat / BUCKET_US;
  hist[b < BUCKETS ? b : BUCKETS - 1]++;
}

// SSE scan of body bytes: an event ends at a blank line; its timestamp is the first "ts":<digits>.
static void scan(conn_t *c, const char *p, size_t n, uint64_t t) {
  const char *end = p + n;
  while (p < end) {
    if (c->skip_line) {
      const char *lf = memchr(p, '\n', (size_t)(end - p));
      if (!lf) return;
      p = lf;
      c->skip_line = 0;
    }
    char b = *p++;
    if (b == '\n') {
      if (c->in_digits) {
        c->in_digits = 0;
        c->ev_ts = c->ts;
        c->has_ts = 1;
      }
      if (c->nl) {
        if (c->has_ts) on_event_end(c, t);
        c->has_ts = 0;
      }
      c->nl = 1;
      c->pm = 0;
      continue;
    }
    c->nl = 0;
    if (c->in_digits) {
      if (b >= '0' && b <= '9') {
        c->ts = c->ts * 10 + (uint64_t)(b - '0');
        continue;
      }
      c->in_digits = 0;
      c->ev_ts = c->ts;
      c->has_ts = 1;
      c->skip_line = 1; // the rest of the line is padding
      continue;
    }
    if (c->has_ts) continue;
    if (b == PATTERN[c->pm]) {
      if (++c->pm == sizeof PATTERN - 1) {
        c->pm = 0;
        c->in_digits = 1;
        c->ts = 0;
      }
    } else {
      c->pm = b == PATTERN[0] ? 1 : 0;
    }
  }
}

// chunked transfer decoding in place over the read buffer
static void body(conn_t *c, const char *p, size_t n, uint64_t t) {
  if (!c->chunked) {
    scan(c, p, n, t);
    return;
  }
  const char *end = p + n;
  while (p < end) {
    switch (c->cstate) {
    case C_SIZE: {
      char b = *p++;
      if (b >= '0' && b <= '9') c->crem = c->crem * 16 + (uint64_t)(b - '0');
      else if ((b | 32) >= 'a' && (b | 32) <= 'f') c->crem = c->crem * 16 + (uint64_t)((b | 32) - 'a' + 10);
      else if (b == ';') c->cstate = C_EXT;
      else if (b == '\n') c->cstate = c->crem ? C_DATA : C_CRLF;
      break;
    }
    case C_EXT:
      if (*p++ == '\n') c->cstate = c->crem ? C_DATA : C_CRLF;
      break;
    case C_DATA: {
      size_t take = (size_t)(end - p) < c->crem ? (size_t)(end - p) : (size_t)c->crem;
      scan(c, p, take, t);
      p += take;
      c->crem -= take;
      if (!c->crem) c->cstate = C_CRLF;
      break;
    }
    case C_CRLF:
      if (*p++ == '\n') {
        c->cstate = C_SIZE;
        c->crem = 0;
      }
      break;
    }
  }
}

static void headers(conn_t *c, const char *p, size_t n, uint64_t t) {
  if (!c->hdr) c->hdr = malloc(HDR_MAX + 1);
  size_t room = (size_t)(HDR_MAX - c->hdr_len);
  size_t take = n < room ? n : room;
  memcpy(c->hdr + c->hdr_len, p, take);
  int before = c->hdr_len;
  c->hdr_len += (int)take;
  c->hdr[c->hdr_len] = 0;
  char *sep = strstr(c->hdr, "\r\n\r\n");
  if (!sep) {
    if (c->hdr_len >= HDR_MAX) kill_conn(c, 0);
    return;
  }
  size_t head_len = (size_t)(sep - c->hdr) + 4;
  *sep = 0;
  int ok = strncmp(c->hdr, "HTTP/1.1 200", 12) == 0;
  c->chunked = strcasestr(c->hdr, "transfer-encoding: chunked") != NULL;
  free(c->hdr);
  c->hdr = NULL;
  if (!ok) {
    kill_conn(c, 0);
    return;
  }
  c->state = S_BODY;
  inflight--;
  established++;
  size_t used = head_len - (size_t)before;
  if (used < n) body(c, p + used, n - used, t);
}

static void on_ready(int i, uint32_t events, char *buf, size_t cap) {
  conn_t *c = &conns[i];
  if (c->state == S_DEAD) return;
  if (c->state == S_CONNECTING) {
    if (events & (EPOLLERR | EPOLLHUP)) {
      kill_conn(c, 1);
      return;
    }
    if (events & EPOLLOUT) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err || write(c->fd, request, (size_t)request_len) != request_len) {
        kill_conn(c, 1);
        return;
      }
      c->state = S_HEADERS;
      struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
      epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    }
    return;
  }
  ssize_t r = read(c->fd, buf, cap);
  if (r <= 0) {
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    kill_conn(c, c->state == S_HEADERS);
    return;
  }
  uint64_t t = now_us();
  if (c->state == S_HEADERS) headers(c, buf, (size_t)r, t);
  else body(c, buf, (size_t)r, t);
}

static double percentile_ms(double q) {
  if (!window_events) return -1;
  uint64_t target = (uint64_t)((double)window_events * q);
  uint64_t seen = 0;
  for (int b = 0; b < BUCKETS; b++) {
    seen += hist[b];
    if (seen > target) return (b + 0.5) * BUCKET_US / 1000.0;
  }
  return (BUCKETS - 0.5) * BUCKET_US / 1000.0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: %s HOST PORT PATH CONNECTIONS WARMUP_S WINDOW_S [MAX_INFLIGHT] [CONNECT_TIMEOUT_S]\n", argv[0]);
    return 2;
  }
  const char *host = argv[1];
  int port = atoi(argv[2]);
  const char *path = argv[3];
  nconns = atoi(argv[4]);
  int warmup_s = atoi(argv[5]);
  int window_s = atoi(argv[6]);
  int max_inflight = argc > 7 ? atoi(argv[7]) : 256;
  int connect_timeout_s = argc > 8 ? atoi(argv[8]) : 60;
  if (strcmp(host, "127.0.0.1") != 0) {
    fprintf(stderr, "this bench client only targets 127.0.0.1\n");
    return 2;
  }
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if ((rlim_t)nconns + 16 > rl.rlim_cur) {
    fprintf(stderr, "connections %d exceed the open-file limit %lu\n", nconns, (unsigned long)rl.rlim_cur);
    return 2;
  }
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  inet_pton(AF_INET, host, &addr.sin_addr);
  request_len = snprintf(request, sizeof request,
                         "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
                         path, port);
  conns = calloc((size_t)nconns, sizeof *conns);
  hist = calloc(BUCKETS, sizeof *hist);
  ep = epoll_create1(EPOLL_CLOEXEC);
  size_t cap = 256 * 1024;
  char *buf = malloc(cap);
  struct epoll_event evs[1024];

  uint64_t start = mono_ms();
  uint64_t phase_at = 0, window_started = 0;
  int phase = 0; // 0 connecting, 1 warm-up, 2 measuring
  for (;;) {
    while (phase == 0 && inflight < max_inflight && next_to_open < nconns) open_conn(next_to_open++);
    int n = epoll_wait(ep, evs, 1024, 50);
    for (int k = 0; k < n; k++) on_ready((int)evs[k].data.u32, evs[k].events, buf, cap);
    uint64_t now = mono_ms();
    if (phase == 0 && ((next_to_open >= nconns && inflight == 0) || now - start >= (uint64_t)connect_timeout_s * 1000)) {
      printf("connected %d failed %d ms %llu\n", established, failed, (unsigned long long)(now - start));
      fflush(stdout);
      phase = 1;
      phase_at = now;
    } else if (phase == 1 && now - phase_at >= (uint64_t)warmup_s * 1000) {
      printf("measure\n");
      fflush(stdout);
      for (int i = 0; i < nconns; i++) conns[i].window_events = 0;
      measuring = 1;
      phase = 2;
      window_started = now_us();
      phase_at = now;
    } else if (phase == 2 && now - phase_at >= (uint64_t)window_s * 1000) {
      break;
    }
  }
  double seconds = (double)(now_us() - window_started) / 1e6;
  measuring = 0;
  uint32_t *per = malloc(sizeof(uint32_t) * (size_t)(nconns ? nconns : 1));
  int live = 0;
  for (int i = 0; i < nconns; i++)
    if (conns[i].state == S_BODY) per[live++] = conns[i].window_events;
  qsort(per, (size_t)live, sizeof *per, cmp_u32);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  printf("{\"connections\":%d,\"live_at_end\":%d,\"failed\":%d,\"dropped_in_window\":%llu,\"window_s\":%.3f,"
         "\"events\":%llu,\"events_per_s\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,"
         "\"per_conn_min\":%u,\"per_conn_median\":%u,\"client_cpu_s\":%.3f}\n",
         nconns, live, failed, (unsigned long long)dropped_in_window, seconds, (unsigned long long)window_events,
         (double)window_events / seconds, percentile_ms(0.5), percentile_ms(0.99), (double)max_lat_us / 1000.0,
         live ? per[0] : 0, live ? per[live / 2] : 0, cpu);
  fflush(stdout);
  return 0; // sockets are reset by SO_LINGER at exit
}
