// Opens an asio TCP acceptor for a server: parses the numeric host, binds with
// SO_REUSEADDR, listens with the system's backlog and puts the socket in non-blocking
// mode (so a direct ::accept4 on it, as the accept loop's descriptor reserve does, never
// blocks). The listener of the HTTP server core (bench/http/accept_loop.h).
// Throws std::runtime_error "<who>: ..." naming the address when it cannot ("..." alone
// when `who` is empty; an IPv6 address in brackets: "[::1]:8000").
// Threads: call before the acceptor is used by any other thread.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>

namespace chaosbench::bench {

// Returns the bound port (the ephemeral one when `port` is 0).
unsigned short listen_tcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, unsigned short port,
                          const std::string& who);

}  // namespace chaosbench::bench
