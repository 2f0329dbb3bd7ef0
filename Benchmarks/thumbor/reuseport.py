"""Starts one single-process thumbor on a listening socket of its own.

    python reuseport.py PORT THUMBOR [thumbor arguments...]

The socket is bound to 127.0.0.1:PORT with SO_REUSEPORT and handed to thumbor
with --fd, so that several of these share the port and the kernel spreads
new connections across them evenly. (`thumbor --processes N` forks after
binding one socket, and tornado's accept loop lets whichever process wakes
first take every connection that is waiting: when wrk opens its connections
at once, one process often ends up with all of them.) The thumbor
configuration must set NON_BLOCKING_SOCKETS = True.
"""
import os
import socket
import sys

port, thumbor, arguments = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
listener.bind(("127.0.0.1", port))
listener.listen(1024)
listener.set_inheritable(True)
os.execv(thumbor, [thumbor, "--fd", str(listener.fileno()), "--processes", "1", *arguments])
