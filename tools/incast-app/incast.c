/*
 * incast: partition/aggregate (incast) traffic generator for the ovs-pac
 * testbed.  One binary, three modes: "server" runs on every sender host,
 * "client" is the receiver that asks all senders at once, "rpc" is a
 * receiver's short exchanges on new connections.  See README.md.
 */

#include "incast.h"

#include <stdio.h>
#include <string.h>

int
main(int argc, char *argv[])
{
    if (argc >= 2 && !strcmp(argv[1], "server")) {
        return server_main(argc - 1, argv + 1);
    } else if (argc >= 2 && !strcmp(argv[1], "client")) {
        return client_main(argc - 1, argv + 1);
    } else if (argc >= 2 && !strcmp(argv[1], "rpc")) {
        return rpc_main(argc - 1, argv + 1);
    }
    fprintf(stderr, "usage: incast server --listen ADDR:PORT [options]\n"
                    "       incast client --servers ADDR:PORT[,...] "
                    "[options]\n"
                    "       incast rpc --servers ADDR:PORT[,...] --count N "
                    "[options]\n"
                    "Run \"incast MODE --help\" for details.\n");
    return 2;
}
