// libcurl's easy interface, one handle per request. See http_client.h.
#include "harness/http/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace chaosbench::harness::http {
namespace {

// curl_global_init is not thread-safe and must come before any handle: once per process.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string* body;
  std::size_t limit;
  bool overflow = false;
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const std::size_t n = size * count;
  if (sink->body->size() + n > sink->limit) {
    sink->overflow = true;
    return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::string url_problem(const std::string& url) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) return "the URL must start with http:// or https://";
  if (url.size() > 8192) return "the URL is longer than 8192 characters";
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "the URL has a space or a control character";
  return "";
}

Response fetch(const Request& request) {
  if (auto why = url_problem(request.url); !why.empty()) throw std::invalid_argument(why + ": " + request.url);
  global_init();
  Response out;
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) {
    out.error = "libcurl could not make a handle";
    return out;
  }
  CURL* c = easy.get();
  Sink sink{&out.body, request.max_body};
  char error[CURL_ERROR_SIZE] = {0};
  std::unique_ptr<curl_slist, ListDeleter> headers;
  for (const auto& [k, v] : request.headers) {
    const std::string line = k + ": " + v;
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (!grown) {
      out.error = "out of memory for the request's headers";
      return out;
    }
    (void)headers.release();
    headers.reset(grown);
  }
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  // 0 means "no deadline" to libcurl: a sub-millisecond timeout (a scenario's "500us")
  // must not become a request that can hang forever, and with it a thread's stop().
  const long timeout_ms = std::max<long>(1, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "chaosbench/" CHAOSBENCH_VERSION);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (request.method == "POST" || !request.body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  if (request.method != "GET" && request.method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  const CURLcode rc = curl_easy_perform(c);
  double total = 0;
  curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &total);
  out.elapsed_s = total;
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  out.status = static_cast<int>(status);
  if (char* type = nullptr; curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) out.content_type = type;
  if (rc != CURLE_OK) {
    out.error = sink.overflow ? "the answer is longer than " + std::to_string(request.max_body) + " bytes"
                              : std::string(error[0] ? error : curl_easy_strerror(rc));
    out.body.clear();
  }
  return out;
}

}  // namespace chaosbench::harness::http
