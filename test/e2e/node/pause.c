/* pause - the sandbox ("pause") container of the local cluster's real node:
 * it holds the Pod's namespaces and does nothing else. PID 1 of the sandbox,
 * so it reaps the zombies it inherits and exits on SIGINT/SIGTERM.
 * Built static by test/e2e/node/node.sh (gcc -static) into an image of its
 * own (oci-image.py), the containerd sandbox_image. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("pause (modelservice e2e)");
    return 0;
  }
  if (getpid() != 1) fputs("pause: warning: not running as PID 1\n", stderr);
  struct sigaction stop = {.sa_handler = on_stop};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
      sigaction(SIGCHLD, &child, NULL) < 0) {
    perror("pause: sigaction");
    return 1;
  }
  for (;;) pause();
}
