#pragma once
/// Text from a TCP socket, split at a delimiter (Flink's SocketTextStreamFunction). A reader
/// thread blocks on the socket and queues lines; the task drains the queue and is woken when
/// lines arrive. The stream ends when the peer closes the connection.

#include "runtime/streaming/operator_api.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace flint::streaming {

class socket_source final : public source_operator {
public:
  socket_source(std::string host, int port, char delimiter, const operator_context& ctx,
                std::unique_ptr<output<std::string>> out)
    : host_(std::move(host)),
      port_(port),
      delimiter_(delimiter),
      wake_(ctx.wake),
      yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    records_out_ = 0;
  }
  ~socket_source() override { close(); }

  void open() override {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
        rc != 0)
      throw std::runtime_error("Cannot resolve " + host_ + ": " + ::gai_strerror(rc));
    for (auto* a = found; a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) == 0)
        fd_ = fd;
      else if (fd >= 0)
        ::close(fd);
    }
    ::freeaddrinfo(found);
    if (fd_ < 0)
      throw std::runtime_error("Cannot connect to socket " + host_ + ":" + std::to_string(port_));
    reader_ = std::thread([this] { read_loop(); });
  }

  source_status emit_next(std::size_t max_records) override {
    std::deque<std::string> lines;
    bool ended = false;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      while (!queue_.empty() && lines.size() < max_records) {
        lines.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      ended = ended_ && queue_.empty();
      waiting_ = lines.empty() && !ended;
    }
    records_out_ += static_cast<std::int64_t>(lines.size());
    for (auto& line : lines)
      out_->collect(std::move(line));
    (void)yield_;
    if (ended)
      return source_status::end_of_input;
    return lines.empty() ? source_status::nothing_available : source_status::more_available;
  }

  void close() override {
    if (fd_ >= 0)
      ::shutdown(fd_, SHUT_RDWR);
    if (reader_.joinable())
      reader_.join();
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

private:
  void read_loop() {
    std::string partial;
    char buf[8192];
    for (;;) {
      auto got = ::recv(fd_, buf, sizeof buf, 0);
      if (got <= 0)
        break;
      std::deque<std::string> lines;
      for (ssize_t i = 0; i < got; ++i) {
        if (buf[i] == delimiter_) {
          if (!partial.empty() && partial.back() == '\r' && delimiter_ == '\n')
            partial.pop_back();
          lines.push_back(std::move(partial));
          partial.clear();
        } else {
          partial.push_back(buf[i]);
        }
      }
      if (!lines.empty())
        deliver(std::move(lines), false);
    }
    std::deque<std::string> rest;
    if (!partial.empty())
      rest.push_back(std::move(partial));
    deliver(std::move(rest), true);
  }

  void deliver(std::deque<std::string> lines, bool ended) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      for (auto& l : lines)
        queue_.push_back(std::move(l));
      ended_ = ended_ || ended;
      wake = waiting_;
      waiting_ = false;
    }
    if (wake && wake_)
      wake_();
  }

  std::string host_;
  int port_;
  char delimiter_;
  std::function<void()> wake_;
  yield_signal yield_;
  output_ref<std::string> out_;
  int fd_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::deque<std::string> queue_;
  bool ended_ = false;
  bool waiting_ = false;
};

} // namespace flint::streaming
