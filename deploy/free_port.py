"""The one free-port helper of deploy/: a free TCP port on 127.0.0.1, picked by the kernel.

Another process may take it before it is used; the callers notice (a Redis that does not
start, a server whose port is taken). Imported by the Python tools; deploy/lib.sh's
free_port runs this file.
"""
import socket


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    print(free_port())
