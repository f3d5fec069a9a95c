// BeastRequestParser: Beast's request_parser<string_body>, fed by hand. See the header.
#include "bench/http/beast_request_parser.h"

#include <fmt/format.h>

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace chaosbench::bench::http {
namespace {

namespace bhttp = boost::beast::http;  // not "http": that is this namespace

std::string beast_text(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

}  // namespace

struct BeastRequestParser::Impl {
  std::optional<bhttp::request_parser<bhttp::string_body>> parser;
};

BeastRequestParser::BeastRequestParser() : impl_(std::make_unique<Impl>()) {}
BeastRequestParser::~BeastRequestParser() = default;

void BeastRequestParser::reset(std::size_t header_limit, std::uint64_t body_limit) {
  auto& p = impl_->parser.emplace();
  p.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(header_limit, UINT32_MAX)));
  p.body_limit(body_limit);
  header_limit_ = header_limit;
  body_limit_ = body_limit;
  header_seen_ = false;
}

BeastRequestParser::Step BeastRequestParser::fail(int status, std::string message) {
  failure_ = {status, std::move(message)};
  return Step::kFailed;
}

BeastRequestParser::Step BeastRequestParser::put(std::string_view bytes, std::size_t& consumed) {
  auto& p = *impl_->parser;
  boost::beast::error_code ec;
  std::size_t taken = 0;
  auto failed = [&]() {
    consumed += taken;
    if (ec == bhttp::error::header_limit)
      return fail(431, fmt::format("request header over the limit of {} bytes", header_limit_));
    if (ec == bhttp::error::body_limit)
      return fail(413, fmt::format("request body over the limit of {} bytes", body_limit_));
    return fail(400, "bad HTTP request: " + ec.message());
  };
  if (!header_seen_) {
    if (bytes.empty()) return Step::kNeedMore;
    // Not eager: put() returns once the header is whole, before any of the body.
    taken = p.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
    if (ec && ec != bhttp::error::need_more) return failed();
    consumed += taken;
    if (ec || !p.is_header_done()) return Step::kNeedMore;
    header_seen_ = true;
    return Step::kHeader;
  }
  while (!p.is_done() && taken < bytes.size()) {
    const std::size_t n = p.put(boost::asio::const_buffer(bytes.data() + taken, bytes.size() - taken), ec);
    taken += n;
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec) return failed();
    if (n == 0) break;
  }
  consumed += taken;
  return p.is_done() ? Step::kDone : Step::kNeedMore;
}

BeastRequestParser::Step BeastRequestParser::put_eof() {
  auto& p = *impl_->parser;
  if (!p.got_some()) return Step::kNeedMore;
  boost::beast::error_code ec;
  p.put_eof(ec);
  if (!ec) ec = bhttp::error::partial_message;  // a request never ends at a close
  return fail(400, "bad HTTP request: " + ec.message());
}

bool BeastRequestParser::got_some() const { return impl_->parser && impl_->parser->got_some(); }

std::optional<std::uint64_t> BeastRequestParser::content_length() const {
  const auto length = impl_->parser->content_length();
  if (!length) return std::nullopt;
  return *length;
}

bool BeastRequestParser::chunked() const { return impl_->parser->chunked(); }

ServerRequest BeastRequestParser::release() {
  auto req = impl_->parser->release();
  impl_->parser.reset();
  return {beast_text(req.method_string()), beast_text(req.target()), std::move(req.body()), req.version(),
          req.keep_alive()};
}

}  // namespace chaosbench::bench::http
