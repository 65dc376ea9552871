#pragma once
/// The sinks without checkpoint commits: print and writeAsText (file_sink.hpp is the FileSink).

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/record_format.hpp"
#include "runtime/streaming/write_mode.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flint::streaming {

/// Writes each record as a line to standard output, with Flink's `N> ` prefix (N = subtask + 1)
/// when the sink runs at parallelism above 1. Lines are handed on in batches, whole.
template <class T>
class print_sink final : public one_input_operator<T> {
public:
  explicit print_sink(const operator_context& ctx) : write_(ctx.write_stdout) {
    this->records_in_ = 0;
    if (ctx.parallelism > 1)
      prefix_ = std::to_string(ctx.subtask_index + 1) + "> ";
  }
  void process_element(const T& value) override {
    ++this->records_in_;
    text_ += prefix_;
    format_record(text_, value);
    text_ += '\n';
    if (text_.size() >= (1u << 16))
      end_of_batch();
  }
  void end_of_batch() override {
    if (!text_.empty() && write_)
      write_(text_);
    text_.clear();
  }
  void finish() override { end_of_batch(); }
  void close() override { end_of_batch(); }

private:
  std::function<void(std::string_view)> write_;
  std::string prefix_;
  std::string text_;
};

/// Writes each record as a line of text (Flink's writeAsText). At parallelism 1 `path` is the
/// file; above 1 it is a directory holding one file per subtask, named 1, 2, ... What existed at
/// the path was refused or removed when the job was submitted (initialize_text_output); a task
/// deletes nothing: it writes its own file, and a restarted attempt rewrites it.
template <class T>
class text_sink final : public one_input_operator<T> {
public:
  text_sink(std::string path, const operator_context& ctx)
    : path_(std::move(path)),
      subtask_(ctx.subtask_index),
      parallelism_(ctx.parallelism) {
    this->records_in_ = 0;
  }
  ~text_sink() override {
    if (file_)
      std::fclose(file_);
  }

  void open() override {
    std::filesystem::path target(path_);
    std::error_code ec;
    if (parallelism_ > 1) {
      std::filesystem::create_directories(target, ec);
      if (!std::filesystem::is_directory(target))
        throw std::runtime_error("Cannot create output directory " + path_ + ": "
                                 + (ec ? ec.message() : std::string(no_overwrite_message)));
      target /= std::to_string(subtask_ + 1);
    } else {
      if (std::filesystem::is_directory(target, ec))
        throw std::runtime_error("Cannot write to " + path_ + ": "
                                 + std::string(no_overwrite_message));
      if (target.has_parent_path())
        std::filesystem::create_directories(target.parent_path(), ec);
    }
    file_ = std::fopen(target.c_str(), "wb");
    if (!file_)
      throw std::runtime_error("Cannot open output file " + target.string() + ": "
                               + std::strerror(errno));
  }

  void process_element(const T& value) override {
    ++this->records_in_;
    text_.clear();
    format_record(text_, value);
    text_ += '\n';
    if (std::fwrite(text_.data(), 1, text_.size(), file_) != text_.size())
      throw std::runtime_error("Cannot write to " + path_ + ": " + std::strerror(errno));
  }

  void finish() override {
    if (file_ && std::fflush(file_) != 0)
      throw std::runtime_error("Cannot write to " + path_ + ": " + std::strerror(errno));
  }

  void close() override {
    if (file_) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }

private:
  std::string path_;
  int subtask_;
  int parallelism_;
  std::FILE* file_ = nullptr;
  std::string text_;
};

} // namespace flint::streaming
