/*
 * fcgi_fixed.c - the ceiling of "a FastCGI application behind nginx": a
 * minimal libfcgi responder that answers every request with the same bytes
 * (the 50-row stream JSON), doing no other work: no database, no session,
 * no parsing beyond what libfcgi does to read the request.
 *
 *   cc -O2 -o fcgi_fixed fcgi_fixed.c -lfcgi
 *   fcgi_fixed SOCKET_PATH BODY_FILE [PROCESSES] [PID_FILE] [keep]
 *
 * Listens on the unix socket SOCKET_PATH (mode 0666, backlog 511), forks
 * PROCESSES (default 4) workers that accept on it, like the iReporter server's
 * pm=static worker model. The parent waits; SIGTERM/SIGINT to the parent
 * stops the workers and removes the socket. Workers also die with the parent
 * (PR_SET_PDEATHSIG). bench/run.sh builds and starts it.
 *
 * "keep": each process serves every connection it has accepted, kept open
 * by nginx (fastcgi_keep_conn), and the listening socket, waiting in poll()
 * for whichever has a request: the ceiling of kept FastCGI connections.
 */
#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char HEADER[] = "Status: 200 OK\r\nContent-Type: application/json\r\n\r\n";
static char *body;
static long body_len;
static pid_t children[256];
static int nchildren;
static volatile sig_atomic_t stopping;

static void on_stop(int sig) { (void)sig; stopping = 1; }

static void serve(int listen_fd) {
    FCGX_Request req;
    char buf[4096];
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (FCGX_InitRequest(&req, listen_fd, 0) != 0) _exit(1);
    while (FCGX_Accept_r(&req) >= 0) {
        /* drain the request body (a few bytes for command=stream) */
        while (FCGX_GetStr(buf, sizeof buf, req.in) > 0) {}
        FCGX_PutStr(HEADER, sizeof HEADER - 1, req.out);
        FCGX_PutStr(body, (int)body_len, req.out);
        FCGX_Finish_r(&req);
    }
    _exit(0);
}

/* One request, answered with the fixed bytes; false if the connection is gone. */
static int answer(FCGX_Request *req) {
    char buf[4096];
    if (FCGX_Accept_r(req) < 0) return 0;
    while (FCGX_GetStr(buf, sizeof buf, req->in) > 0) {}
    FCGX_PutStr(HEADER, sizeof HEADER - 1, req->out);
    FCGX_PutStr(body, (int)body_len, req->out);
    FCGX_Finish_r(req);
    return 1;
}

#define MAX_CONNS 256

static void serve_kept(int listen_fd) {
    static FCGX_Request reqs[MAX_CONNS];
    struct pollfd fds[MAX_CONNS + 1];
    int slot_of[MAX_CONNS + 1];
    int nconns = 0;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    for (;;) {
        int n = 0;
        for (int i = 0; i < nconns; i++) { fds[n].fd = reqs[i].ipcFd; fds[n].events = POLLIN; slot_of[n++] = i; }
        if (nconns < MAX_CONNS) { fds[n].fd = listen_fd; fds[n].events = POLLIN; slot_of[n++] = -1; }
        if (poll(fds, n, -1) < 0) { if (errno == EINTR) continue; _exit(1); }
        for (int k = 0; k < n; k++) {
            if (!fds[k].revents) continue;
            int i = slot_of[k];
            if (i < 0) { i = nconns; FCGX_InitRequest(&reqs[i], listen_fd, 0); nconns++; }
            /* a kept connection that nginx closed, or nothing left to accept */
            if (!answer(&reqs[i]) || reqs[i].ipcFd < 0) reqs[i].ipcFd = -1;
        }
        /* compact: drop the closed connections (ipcFd -1 after libfcgi closed them) */
        int m = 0;
        for (int i = 0; i < nconns; i++) if (reqs[i].ipcFd >= 0) { if (m != i) reqs[m] = reqs[i]; m++; }
        nconns = m;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SOCKET_PATH BODY_FILE [PROCESSES] [PID_FILE]\n", argv[0]);
        return 2;
    }
    const char *sock = argv[1];
    int n = argc > 3 ? atoi(argv[3]) : 4;
    if (n < 1 || n > 256) n = 4;

    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    body_len = ftell(f);
    fseek(f, 0, SEEK_SET);
    body = malloc(body_len ? body_len : 1);
    if (!body || fread(body, 1, body_len, f) != (size_t)body_len) { perror("read body"); return 1; }
    fclose(f);

    if (FCGX_Init() != 0) { fprintf(stderr, "FCGX_Init failed\n"); return 1; }
    unlink(sock);
    int fd = FCGX_OpenSocket(sock, 511);
    if (fd < 0) { fprintf(stderr, "cannot listen on %s\n", sock); return 1; }
    chmod(sock, 0666);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); break; }
        if (pid == 0) { if (argc > 5 && strcmp(argv[5], "keep") == 0) serve_kept(fd); else serve(fd); }
        children[nchildren++] = pid;
    }
    if (argc > 4) {
        FILE *p = fopen(argv[4], "w");
        if (p) { fprintf(p, "%d\n", (int)getpid()); fclose(p); }
    }
    while (!stopping) {
        pid_t dead = wait(NULL);
        if (dead < 0 && errno == ECHILD) break;
    }
    for (int i = 0; i < nchildren; i++) kill(children[i], SIGTERM);
    while (wait(NULL) > 0 || errno == EINTR) {}
    unlink(sock);
    if (argc > 4) unlink(argv[4]);
    return 0;
}
