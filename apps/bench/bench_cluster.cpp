// flint-bench cluster: MiniCluster start time, and submit→RUNNING / submit→FINISHED of no-op
// jobs (2 vertices × parallelism 2, and 1000 tasks). "RUNNING" is when the last task of the job
// ran its first step. The baseline, measured in the same run, spawns as many bare detached CAF
// actors (one thread each, like tasks) and waits for one message from each: the floor under
// any task deployment on this machine.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "api/api.hpp"
#include "apps/bench/benches.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/minicluster/minicluster.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double ms(clock_type::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

/// Counts tasks that ran their first step; marks when the expected number did.
struct running_probe {
  std::atomic<int> running{0};
  int expected = 0;
  std::promise<clock_type::time_point> all_running;
};

struct probe_invokable : task_executor::invokable {
  explicit probe_invokable(std::shared_ptr<running_probe> p) : probe(std::move(p)) {}
  expected<bool> step() override {
    if (probe->running.fetch_add(1) + 1 == probe->expected)
      probe->all_running.set_value(clock_type::now());
    return true;
  }
  std::shared_ptr<running_probe> probe;
};

graph::job_graph two_vertex_job(int parallelism, std::uint64_t id) {
  api::stream_execution_environment env;
  env.set_parallelism(parallelism);
  env.set_job_id(graph::job_id{0xBE, id});
  env.generate_sequence(1, 10).rebalance().print();
  return std::move(*env.get_job_graph("no-op " + std::to_string(2 * parallelism) + " tasks"));
}

/// Spawns `n` detached bare actors and waits until each answered once.
double bare_detached_spawn_ms(caf::actor_system& sys, int n) {
  caf::scoped_actor self{sys, true};
  auto start = clock_type::now();
  for (int i = 0; i < n; ++i) {
    auto a = sys.spawn<caf::detached>([](caf::event_based_actor* me) -> caf::behavior {
      return {[me](int x) {
        me->quit();
        return x;
      }};
    });
    self->send(a, i);
  }
  for (int i = 0; i < n; ++i)
    self->receive([](int) {});
  return ms(clock_type::now() - start);
}

struct job_figures {
  double to_running_ms = -1;
  double to_finished_ms = -1;
  std::string status;
};

job_figures run_job(minicluster::minicluster& mc, caf::actor_system& sys,
                    const std::shared_ptr<running_probe>& probe, const graph::job_graph& job,
                    int tasks) {
  probe->running = 0;
  probe->expected = tasks;
  probe->all_running = {};
  auto running_at = probe->all_running.get_future();
  auto gw = *mc.dispatcher_gateway();
  caf::scoped_actor self{sys, true};
  rpc::client_identity who{"bench_client", nullptr, std::chrono::seconds(60)};
  job_figures f;
  auto start = clock_type::now();
  auto submitted = gw.ask_blocking<dispatcher::submit_job>(*self, who, {job});
  if (!submitted) {
    f.status = submitted.error().to_string();
    return f;
  }
  auto result = gw.ask_blocking<dispatcher::request_job_result>(*self, who, {job.job_id});
  auto end = clock_type::now();
  if (!result) {
    f.status = result.error().to_string();
    return f;
  }
  f.status = std::string(graph::to_string(result->status));
  f.to_finished_ms = ms(end - start);
  if (running_at.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    f.to_running_ms = ms(running_at.get() - start);
  return f;
}

} // namespace

int cluster(int argc, char** argv) {
  int big_tasks = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) {
      big_tasks = std::max(2, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: flint-bench cluster [--tasks N]\n");
      return 2;
    }
  }
  big_tasks -= big_tasks % 2;

  caf::actor_system_config cfg;
  rpc::configure_node(cfg, {"stealing", 0, false, {}, {}});
  caf::actor_system sys{cfg};
  trace::trace_recorder recorder(trace::system_now_us);
  auto probe = std::make_shared<running_probe>();

  minicluster::minicluster_config mc_cfg;
  mc_cfg.number_of_task_managers = 1;
  // One sharing group: a job needs as many slots as its largest parallelism.
  mc_cfg.number_of_slots_per_task_manager = big_tasks / 2;
  mc_cfg.invokables = [probe](const graph::task_deployment_descriptor&) {
    return std::make_unique<probe_invokable>(probe);
  };

  auto start = clock_type::now();
  minicluster::minicluster mc(sys, mc_cfg, &recorder);
  mc.start();
  auto gw = mc.await_dispatcher(std::chrono::seconds(10));
  // Started = the Dispatcher leads and the ResourceManager has every slot registered.
  double start_ms = -1;
  {
    caf::scoped_actor self{sys, true};
    rpc::client_identity who{"bench_client", nullptr, std::chrono::seconds(10)};
    auto rm = mc.directory().lookup(resource_manager::endpoint_name);
    for (int attempt = 0; gw && rm && attempt < 100000; ++attempt) {
      // The RM's token is its leader id: read it from the HA services.
      rpc::gateway rm_gw(*rm, resource_manager::endpoint_name,
                         mc.ha().resource_manager_leadership().current_session_id());
      auto overview =
        rm_gw.ask_blocking<resource_manager::request_resource_overview>(*self, who, {});
      if (overview
          && overview->number_registered_slots == mc_cfg.number_of_slots_per_task_manager) {
        start_ms = ms(clock_type::now() - start);
        break;
      }
    }
  }
  if (start_ms < 0) {
    std::fprintf(stderr, "flint-bench cluster: the MiniCluster did not start\n");
    return 1;
  }
  auto small = run_job(mc, sys, probe, two_vertex_job(2, 1), 4);
  auto small2 = run_job(mc, sys, probe, two_vertex_job(2, 2), 4); // warm
  auto big = run_job(mc, sys, probe, two_vertex_job(big_tasks / 2, 3), big_tasks);
  auto bare_small = bare_detached_spawn_ms(sys, 4);
  auto bare_big = bare_detached_spawn_ms(sys, big_tasks);

  std::printf(
    "{\"bench\":\"cluster\",\"case\":\"minicluster_start\",\"slots\":%d,\"start_ms\":%.2f}\n",
    mc_cfg.number_of_slots_per_task_manager, start_ms);
  auto print_job = [](const char* name, int tasks, const job_figures& f, double bare) {
    std::printf(
      "{\"bench\":\"cluster\",\"case\":\"%s\",\"tasks\":%d,\"status\":\"%s\","
      "\"submit_to_running_ms\":%.2f,\"submit_to_finished_ms\":%.2f,"
      "\"baseline_spawn_detached_ms\":%.2f,\"ratio_finished_to_baseline\":%.1f}\n",
      name, tasks, f.status.c_str(), f.to_running_ms, f.to_finished_ms, bare,
      bare > 0 ? f.to_finished_ms / bare : 0.0);
  };
  print_job("noop_2x2_first", 4, small, bare_small);
  print_job("noop_2x2", 4, small2, bare_small);
  print_job("noop_tasks", big_tasks, big, bare_big);
  std::fflush(stdout);
  mc.shutdown();
  return 0;
}

} // namespace flint::bench
