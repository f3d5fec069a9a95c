// bench/http/http_response_reader: the HTTP client core's response parser under both load
// generators: framing (Content-Length, chunked, until close), body bytes delivered as they
// arrive, and hostile servers (every prefix, random bytes, oversize, bad hex, missing
// CRLF, absurd Content-Length values).
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "bench/http/http_response_reader.h"

namespace http_response_reader_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using chaosbench::bench::http::HttpResponseReader;
using Limits = HttpResponseReader::Limits;
using State = HttpResponseReader::State;
using Error = HttpResponseReader::Error;
using namespace std::string_literals;

struct Parsed {
  State state;
  Error error;
  std::string body;
  std::size_t consumed = 0;
};

// Feeds `input` in pieces of `piece` bytes (all at once when 0).
Parsed parse(const std::string &input, std::size_t piece = 0, Limits limits = {}) {
  HttpResponseReader p(limits);
  Parsed out{};
  const std::size_t step = piece == 0 ? std::max<std::size_t>(input.size(), 1) : piece;
  for (std::size_t at = 0; at < input.size(); at += step) {
    const std::string_view part = std::string_view(input).substr(at, step);
    const auto used = p.feed(part, [&](std::string_view b) { out.body.append(b); });
    out.consumed += used;
    if (used < part.size()) break;
  }
  out.state = p.state();
  out.error = p.error();
  return out;
}

const std::string kChunked =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
    "chunked\r\n\r\n"
    "5\r\nhello\r\n"
    "00A;name=\"v\";x\r\n, chunked!\r\n"
    "1f \t\r\n0123456789abcdef0123456789ABCDE\r\n"
    "0\r\nX-Trailer: yes\r\n\r\n";
const std::string kChunkedBody = "hello, chunked!0123456789abcdef0123456789ABCDE";

}  // namespace

TEST_CASE("http reader: chunked body with extensions, BWS and trailers, in any split", "[http]") {
  for (std::size_t piece : {0, 1, 2, 3, 7, 16}) {
    const auto r = parse(kChunked, piece);
    CHECK(r.state == State::kComplete);
    CHECK(r.body == kChunkedBody);
    CHECK(r.consumed == kChunked.size());
  }
  HttpResponseReader p;
  p.feed(kChunked, [](std::string_view) {});
  CHECK(p.status() == 200);
  CHECK(p.chunked());
  CHECK(p.keep_alive());
  CHECK(p.content_type() == "text/event-stream");
  CHECK(p.body_bytes() == kChunkedBody.size());
}

TEST_CASE("http reader: body bytes reach the caller before the response ends", "[http]") {
  HttpResponseReader p;
  std::string body;
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK(p.feed(head, [&](std::string_view b) { body.append(b); }) == head.size());
  CHECK(p.head_done());
  CHECK(p.state() == State::kBody);
  p.feed("40\r\ndata: {\"x\"", [&](std::string_view b) { body.append(b); });
  CHECK(body == "data: {\"x\"");  // part of a 64-byte chunk, handed back at once
  const auto s = p.step("12345");
  CHECK(s.consumed == 5);
  CHECK(s.body == "12345");
}

TEST_CASE("http reader: Content-Length, empty bodies, until-close and keep-alive", "[http]") {
  const std::string two = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcdeNEXT";
  auto r = parse(two, 1);
  CHECK(r.state == State::kComplete);
  CHECK(r.body == "abcde");
  CHECK(r.consumed == two.size() - 4);  // the next response's bytes are left

  CHECK(parse("HTTP/1.1 204 No Content\r\n\r\n").state == State::kComplete);
  CHECK(parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n").state == State::kComplete);
  CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").state == State::kComplete);
  CHECK(parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").state == State::kComplete);  // no reason

  HttpResponseReader p;
  p.feed("HTTP/1.0 200 OK\r\n\r\nuntil close", [](std::string_view) {});
  CHECK(p.state() == State::kBody);
  CHECK_FALSE(p.keep_alive());
  CHECK(p.finish_at_eof() == State::kComplete);
  CHECK(p.body_bytes() == 11);

  HttpResponseReader q;
  q.feed("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", [](std::string_view) {});
  CHECK(q.keep_alive());
  q.reset();
  q.feed(
      "HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\nContent-Length: "
      "0\r\n\r\n",
      [](std::string_view) {});
  CHECK(q.state() == State::kComplete);
  CHECK_FALSE(q.keep_alive());
  q.reset();
  q.feed(
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nTransfer-Encoding: "
      "chunked\r\n\r\n",
      [](std::string_view) {});
  CHECK(q.chunked());  // chunked wins, and the connection is not reused (RFC
                       // 9112 §6.3)
  CHECK_FALSE(q.keep_alive());
}

TEST_CASE(
    "http reader: LF-only head lines are accepted, LF-only chunk framing "
    "is not",
    "[http]") {
  auto r = parse("HTTP/1.1 200 OK\nContent-Length: 2\n\nok");
  CHECK(r.state == State::kComplete);
  CHECK(r.body == "ok");
  CHECK(parse("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\r\n0\r\n\r\n").error == Error::kBadChunkFraming);
  CHECK(parse("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\r\nok\n0\r\n\r\n").error == Error::kBadChunkFraming);
  CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n").error == Error::kBadChunkFraming);
  // Trailers are field lines: LF is accepted there.
  CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: b\n\n").state == State::kComplete);
}

TEST_CASE("http reader: interim 1xx heads are skipped, 101 refused", "[http]") {
  auto r = parse(
      "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 "
      "OK\r\nContent-Length: 1\r\n\r\nz",
      1);
  CHECK(r.state == State::kComplete);
  CHECK(r.body == "z");
  CHECK(parse("HTTP/1.1 101 Switching\r\n\r\n").error == Error::kUnsupportedStatus);
  std::string many;
  for (int i = 0; i < 20; ++i) many += "HTTP/1.1 100 Continue\r\n\r\n";
  CHECK(parse(many).error == Error::kUnsupportedStatus);
}

TEST_CASE("http reader: hostile heads are errors", "[http]") {
  const std::string ok = "HTTP/1.1 200 OK\r\n";
  CHECK(parse("HTTP/2 200 OK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse("HTTP/1.1 20 OK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse("HTTP/1.1 099 OK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse("HTTP/1.1 200OK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse("\r\nHTTP/1.1 200 OK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse("HTTP/1.1 200 O\rK\r\n\r\n").error == Error::kBadStatusLine);
  CHECK(parse(ok + "Content-Length : 1\r\n\r\nx").error == Error::kBadHeader);
  CHECK(parse(ok + "X: a\r\n folded\r\n\r\n").error == Error::kBadHeader);
  CHECK(parse(ok + "X: a\rb\r\n\r\n").error == Error::kBadHeader);
  CHECK(parse(ok + "X: a\0b\r\n\r\n"s).error == Error::kBadHeader);
  CHECK(parse(ok + ": empty name\r\n\r\n").error == Error::kBadHeader);
  CHECK(parse(ok + "no colon\r\n\r\n").error == Error::kBadHeader);
  for (const char *length : {"-1", "+5", "5, 5", "0x10", "", "1 2", "99999999999999999999"})
    CHECK(parse(ok + "Content-Length: " + length + "\r\n\r\n").error == Error::kBadContentLength);
  CHECK(parse(ok + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n").error == Error::kBadContentLength);
  CHECK(parse(ok + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nabcde").state == State::kComplete);
  CHECK(parse(ok + "Content-Length: 1000\r\n\r\n", 0, {64 * 1024, 999}).error == Error::kBodyTooLarge);
  CHECK(parse(ok + "Transfer-Encoding: gzip, chunked\r\n\r\n").error == Error::kUnsupportedTransferEncoding);
  CHECK(parse(ok + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n").error ==
        Error::kUnsupportedTransferEncoding);
  CHECK(parse(ok + "X: " + std::string(70 * 1024, 'a') + "\r\n\r\n", 4096).error == Error::kHeadTooLarge);
  CHECK(parse(std::string(70 * 1024, 'H')).error == Error::kHeadTooLarge);
}

TEST_CASE("http reader: the head bound is the same for a head read whole or in pieces", "[http]") {
  // A head that arrives in one read is parsed in place; one split over reads is copied first.
  const Limits limits{256, 1024};
  const std::string start = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX: ";
  const std::string end = "\r\n\r\n";
  const std::string at_bound = start + std::string(limits.max_head - start.size() - end.size(), 'a') + end;
  REQUIRE(at_bound.size() == limits.max_head);
  const std::string past_bound = start + std::string(limits.max_head + 1 - start.size() - end.size(), 'a') + end;
  for (const std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{7}, limits.max_head - 1}) {
    INFO("piece " << piece);
    const auto whole = parse(at_bound + "z", piece, limits);
    CHECK(whole.state == State::kComplete);
    CHECK(whole.body == "z");
    CHECK(parse(past_bound + "z", piece, limits).error == Error::kHeadTooLarge);
  }
  // Interim heads in the same read as the real one: each parsed in turn.
  HttpResponseReader p;
  const std::string two = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
  CHECK(p.feed(two, [](std::string_view) {}) == two.size());
  CHECK(p.state() == State::kComplete);
  CHECK(p.status() == 204);
}

TEST_CASE("http reader: hostile chunk sizes are errors before any overflow", "[http]") {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  CHECK(parse(head + "FFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\n").error == Error::kBodyTooLarge);
  CHECK(parse(head + "10000000\r\n", 0, {64 * 1024, 1000}).error == Error::kBodyTooLarge);
  CHECK(parse(head + "400\r\n" + std::string(1024, 'a') + "\r\n400\r\n", 0, {64 * 1024, 2000}).error ==
        Error::kBodyTooLarge);  // the limit is on the whole body
  for (const char *line : {"-1", "0x10", "", " 5", ";ext", "5 6", "g", "+5"})
    CHECK(parse(head + line + "\r\nhello\r\n0\r\n\r\n").error == Error::kBadChunkSize);
  CHECK(parse(head + "5;" + std::string(300, 'e') + "\r\n").error == Error::kChunkLineTooLong);
  CHECK(parse(head + std::string(300, '0') + "5\r\n").error == Error::kChunkLineTooLong);
  CHECK(parse(head + "5;a\x01\r\n").error == Error::kBadChunkSize);
  CHECK(parse(head + "5\rX").error == Error::kBadChunkFraming);
  CHECK(parse(head + "0\r\nbad trailer\r\n\r\n").error == Error::kBadTrailer);
  CHECK(parse(head + "0\r\nA: " + std::string(70 * 1024, 'a'), 4096).error == Error::kTrailersTooLarge);
}

TEST_CASE(
    "http reader: every prefix of a valid response needs more, then is "
    "truncated",
    "[http]") {
  for (std::size_t n = 0; n < kChunked.size(); ++n) {
    HttpResponseReader p;
    p.feed(std::string_view(kChunked).substr(0, n), [](std::string_view) {});
    INFO("prefix " << n);
    REQUIRE(p.error() == Error::kNone);
    CHECK(p.state() != State::kComplete);
    CHECK(p.finish_at_eof() == State::kError);
    CHECK(p.error() == Error::kTruncated);
  }
}

TEST_CASE(
    "http reader: random bytes and mutated responses never crash, always "
    "progress",
    "[http]") {
  std::mt19937 rng(19);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string alphabet = "0123456789abcdefABCDEF\r\n;: =-xHTP/1.";
  for (int round = 0; round < 3000; ++round) {
    std::string input = round % 3 == 0 ? kChunked : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (round % 3 == 0) {
      for (int flips = 0; flips < 3; ++flips) input[rng() % input.size()] = static_cast<char>(byte(rng));
    } else {
      const std::size_t extra = rng() % 200;
      for (std::size_t i = 0; i < extra; ++i)
        input.push_back(round % 3 == 1 ? static_cast<char>(byte(rng)) : alphabet[rng() % alphabet.size()]);
    }
    HttpResponseReader p({1024, 4096});
    std::size_t at = 0;
    while (at < input.size() && (p.state() == State::kHead || p.state() == State::kBody)) {
      const auto s = p.step(std::string_view(input).substr(at, 1 + rng() % 9));
      REQUIRE((s.consumed > 0 || p.state() == State::kComplete || p.state() == State::kError));
      REQUIRE(s.body.size() <= s.consumed);
      at += s.consumed;
    }
    REQUIRE(at <= input.size());
    REQUIRE(p.body_bytes() <= 4096);
    p.finish_at_eof();
    CHECK(p.state() != State::kBody);
  }
}

TEST_CASE("http reader: a KServe answer's status, Content-Length and Connection, then the next after reset", "[http]") {
  const std::string full = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 3\r\nConnection: close\r\n\r\nabc";
  HttpResponseReader p;
  CHECK(p.feed(full.substr(0, 20), [](std::string_view) {}) == 20);
  CHECK(p.state() == State::kHead);
  std::string body;
  p.feed(full.substr(20), [&](std::string_view b) { body.append(b); });
  REQUIRE(p.state() == State::kComplete);
  CHECK(p.status() == 503);
  CHECK(body == "abc");
  CHECK_FALSE(p.keep_alive());
  p.reset();  // a kept-alive connection's next answer
  CHECK(p.feed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", [](std::string_view) {}) == 40);
  CHECK(p.state() == State::kComplete);
  CHECK(p.status() == 200);
  CHECK(p.keep_alive());
  CHECK(parse("garbage\r\n\r\n").error == Error::kBadStatusLine);
}

TEST_CASE("http reader: absurd Content-Length values are errors, never an overflow", "[http]") {
  const Limits kserve{64 * 1024, 1ull << 30};  // the KServe load generator's body bound
  for (const char *length : {"18446744073709551615", "18446744073709551616", "99999999999999999999999", "1073741825",
                             "-1", "+5", "", "12abc"}) {
    INFO(length);
    const auto r = parse(std::string("HTTP/1.1 200 OK\r\nContent-Length: ") + length + "\r\n\r\nabc", 0, kserve);
    CHECK(r.state == State::kError);
    CHECK((r.error == Error::kBadContentLength || r.error == Error::kBodyTooLarge));
  }
  CHECK(parse("HTTP/1.1 -12 OK\r\n\r\n").error == Error::kBadStatusLine);
  const auto r = parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 0, kserve);
  CHECK(r.state == State::kComplete);
  CHECK(r.consumed == 60);
}

}  // namespace http_response_reader_test
