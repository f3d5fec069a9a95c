// The bytes a ServerSession has read and not yet parsed: one contiguous block that reads
// append to and the parser consumes from the front, grown only when a read needs more
// room than is free (never zero-filled, unlike a std::string resized for each read).
// Data moves only in prepare() and clear(): a read may be pending into the free space
// while the front is consumed, so consume() never moves the end.
// Threads: one owner.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace chaosbench::bench::http {

class SessionBuffer {
 public:
  std::string_view data() const { return {storage_.get() + begin_, end_ - begin_}; }
  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }
  std::size_t capacity() const { return capacity_; }

  void consume(std::size_t n) { begin_ += std::min(n, size()); }
  // Drops every byte (no read may be pending).
  void clear() { begin_ = end_ = 0; }

  // At least `want` free bytes after the data (moving the data to the front first, then
  // growing); returns where they start. free_space() says how many there are. No read may
  // be pending: the data may move.
  char* prepare(std::size_t want) {
    if (begin_ == end_) begin_ = end_ = 0;
    if (capacity_ - end_ < want && begin_ > 0) {
      std::memmove(storage_.get(), storage_.get() + begin_, size());
      end_ -= begin_;
      begin_ = 0;
    }
    if (capacity_ - end_ < want) {
      const std::size_t grown = std::max(capacity_ * 2, end_ + want);
      auto bigger = std::make_unique_for_overwrite<char[]>(grown);
      if (end_ > 0) std::memcpy(bigger.get(), storage_.get(), end_);
      storage_ = std::move(bigger);
      capacity_ = grown;
    }
    return storage_.get() + end_;
  }
  std::size_t free_space() const { return capacity_ - end_; }
  // `n` bytes written at prepare()'s pointer are now data.
  void commit(std::size_t n) { end_ += std::min(n, free_space()); }

 private:
  std::unique_ptr<char[]> storage_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace chaosbench::bench::http
