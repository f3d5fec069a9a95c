// CheckpointWriter: picks full or delta, writes the file and the manifest atomically, drops
// a discarded timeline and retires old files; with async, on its own thread.
//
// Threading: `manifest`, `base` and `deltas_since_full` belong to whichever thread runs
// write_one(). save() waits until no write is in flight before it hands over the next,
// so at most one write_one() runs at a time and they never race; `mu` guards only the
// hand-over (job, busy, stop) and the finished results.
#include "bench/checkpoint/checkpoint_writer.h"

#include "common/files/trusted_directory.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "common/files/safe_files.h"
#include "bench/checkpoint/checkpoint_format.h"
#include "bench/checkpoint/checkpoint_manifest.h"
#include "bench/common/elapsed.h"

namespace chaosbench::bench::train {
namespace {


std::uint64_t raw_size(const CheckpointState& s) {
  std::uint64_t n = 0;
  for (const auto& [name, values] : s.buffers) n += 4 * values.size();
  return n;
}

}  // namespace

struct CheckpointWriter::Impl {
  CheckpointConfig config;
  std::string dir;  // absolute

  // Owned by the thread in write_one() (see the file comment).
  CheckpointManifest manifest;
  std::optional<CheckpointState> base;  // the last full written, for deltas
  int deltas_since_full = 0;

  std::mutex mu;
  std::condition_variable cv;
  std::optional<CheckpointState> job;  // handed to the writer thread
  bool busy = false;                   // a job is queued or being written
  bool stop = false;
  std::vector<SaveResult> done;
  std::thread thread;

  SaveResult write_one(CheckpointState snapshot);
  std::string drop_from(std::int64_t step);
  std::string publish(ManifestEntry entry, std::vector<std::string>* retired);
  void remove_files(const std::vector<std::string>& names) const;
  void run();
  // Records a finished write and wakes save()/wait().
  void finish(SaveResult result) {
    std::lock_guard lock(mu);
    done.push_back(std::move(result));
    busy = false;
    cv.notify_all();
  }
};

void CheckpointWriter::Impl::remove_files(const std::vector<std::string>& names) const {
  // Already gone counts as removed: a crash may have got there first.
  for (const std::string& name : names) ::unlink((dir + "/" + name).c_str());
}

// A save at `step` throws away the timeline at and after it: the manifest first (so a
// crash never leaves it naming a dropped file as good), then the files.
std::string CheckpointWriter::Impl::drop_from(std::int64_t step) {
  if (base && base->step >= step) base.reset();
  std::vector<std::string> dropped;
  std::erase_if(manifest.entries, [&](const ManifestEntry& e) {
    if (e.step < step) return false;
    dropped.push_back(e.file);
    return true;
  });
  if (dropped.empty()) return "";
  if (base) {
    // Deltas until the next full count from what is left on the surviving base.
    deltas_since_full = static_cast<int>(std::count_if(manifest.entries.begin(), manifest.entries.end(), [&](const ManifestEntry& e) {
      return e.kind == CheckpointKind::kDelta && e.base_step == base->step;
    }));
  }
  if (std::string err = common::write_file_atomically(dir + "/" + kManifestFile, manifest_to_json(manifest)); !err.empty())
    return err;
  remove_files(dropped);
  return "";
}

// Adds `entry` to the manifest, applies retention and writes the manifest; on success
// `retired` names the files the caller deletes. On failure the in-memory manifest stays
// as the one on disk.
std::string CheckpointWriter::Impl::publish(ManifestEntry entry, std::vector<std::string>* retired) {
  CheckpointManifest next = manifest;
  next.entries.push_back(std::move(entry));
  std::vector<std::int64_t> fulls;
  for (const ManifestEntry& e : next.entries)
    if (e.kind == CheckpointKind::kFull) fulls.push_back(e.step);
  std::sort(fulls.rbegin(), fulls.rend());
  const std::size_t keep = static_cast<std::size_t>(std::max(1, config.keep_full));
  std::set<std::int64_t> kept(fulls.begin(), fulls.begin() + static_cast<std::ptrdiff_t>(std::min(keep, fulls.size())));
  std::erase_if(next.entries, [&](const ManifestEntry& e) {
    if (kept.count(e.base_step)) return false;  // a kept full (base_step is its own step) or its delta
    retired->push_back(e.file);
    return true;
  });
  if (std::string err = common::write_file_atomically(dir + "/" + kManifestFile, manifest_to_json(next)); !err.empty()) {
    retired->clear();
    return "manifest: " + err;
  }
  manifest = std::move(next);
  return "";
}

SaveResult CheckpointWriter::Impl::write_one(CheckpointState snapshot) {
  const auto start = std::chrono::steady_clock::now();
  SaveResult r;
  r.step = snapshot.step;
  r.raw_bytes = raw_size(snapshot);
  try {
    if (r.error = drop_from(snapshot.step); !r.error.empty()) {
      r.write_ms = ms_since(start);
      return r;
    }
    manifest.model_key = snapshot.model_key;
    const bool delta = config.incremental && base && deltas_since_full + 1 < config.full_every &&
                       base->model_key == snapshot.model_key && same_buffer_layout(*base, snapshot);
    r.full = !delta;
    const CheckpointKind kind = delta ? CheckpointKind::kDelta : CheckpointKind::kFull;
    const std::string name = checkpoint_file_name(snapshot.step, kind);
    r.file = dir + "/" + name;

    std::string file = encode_checkpoint(snapshot, delta ? &*base : nullptr, config.zstd_level);
    r.bytes = file.size();
    if (r.error = common::write_file_atomically(dir + "/" + name, file); r.error.empty()) {
      ManifestEntry entry{name, snapshot.step, kind, delta ? base->step : snapshot.step, file.size(),
                          checkpoint_xxh64(file)};
      std::vector<std::string> retired;
      r.error = publish(std::move(entry), &retired);
      if (r.error.empty()) {
        remove_files(retired);
        if (delta) {
          ++deltas_since_full;
        } else {
          deltas_since_full = 0;
          // Only the incremental mode reads the base; keeping it costs a copy of the state.
          if (config.incremental) base = std::move(snapshot);
        }
      } else {
        ::unlink(r.file.c_str());  // not in the manifest: nobody would read or retire it
      }
    }
  } catch (const std::exception& e) {
    r.error = e.what();  // zstd failure, out of memory: a failed save, not a dead trainer
  }
  r.write_ms = ms_since(start);
  return r;
}

void CheckpointWriter::Impl::run() {
  for (;;) {
    CheckpointState snapshot;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stop || job.has_value(); });
      if (!job) return;  // stop with nothing queued; a queued job is written first
      snapshot = std::move(*job);
      job.reset();
    }
    finish(write_one(std::move(snapshot)));
  }
}

CheckpointWriter::CheckpointWriter(CheckpointConfig config) : impl_(std::make_unique<Impl>()) {
  // Checkpoints are read back as the next run's state: nobody else may write here.
  if (std::string why = common::make_trusted_directory(config.dir, 0750); !why.empty())
    throw std::runtime_error(fmt::format("checkpoint directory: {}", why));
  impl_->dir = std::filesystem::absolute(config.dir).lexically_normal().string();
  if (impl_->dir.size() > 1 && impl_->dir.back() == '/') impl_->dir.pop_back();
  impl_->config = std::move(config);
  // A restarted job continues the directory's manifest, so retention and the dropping of
  // a discarded timeline cover files written before the restart.
  if (auto m = read_manifest(impl_->dir)) impl_->manifest = std::move(*m);
  if (impl_->config.async) impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

CheckpointWriter::~CheckpointWriter() {
  if (!impl_->thread.joinable()) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();  // run() writes a queued job before it honours stop
}

double CheckpointWriter::save(const CheckpointState& state) {
  const auto start = std::chrono::steady_clock::now();
  CheckpointState snapshot = state;
  if (!impl_->config.async) {
    impl_->finish(impl_->write_one(std::move(snapshot)));
    return ms_since(start);
  }
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return !impl_->busy; });
  impl_->job = std::move(snapshot);
  impl_->busy = true;
  lock.unlock();
  impl_->cv.notify_all();
  return ms_since(start);
}

std::vector<SaveResult> CheckpointWriter::completed() {
  std::lock_guard lock(impl_->mu);
  return std::exchange(impl_->done, {});
}

void CheckpointWriter::wait() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return !impl_->busy; });
}

}  // namespace chaosbench::bench::train
