//! What the sandbox costs an approved command: `true` run through
//! `gate::process::run` behind every wall (namespaces, Landlock,
//! seccomp), behind Landlock and seccomp alone, and with no sandbox, in
//! the same run (the last is the baseline the ratios are against). Most
//! of the cost is the kernel's (new namespaces, a mount table laid out,
//! a fork into the PID namespace) and the Landlock ruleset's walk of the
//! file system, built in the parent for each command.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use partner::gate::process::{RunOptions, run};
use partner::gate::sandbox::{self, Plan, Walls};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let scene = partner::gate::Scene::current().in_dir(dir.path());
    let plan = Plan::for_command("true", &scene);
    let every = sandbox::walls();
    assert!(every.complete(), "{:?}", every.missing());
    let mut second = every.clone();
    second.namespaces = Err("left out".into());
    let none = Walls::none("left out");
    let mut group = c.benchmark_group("sandbox");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));
    for (name, walls) in [
        ("every_wall", &every),
        ("landlock_and_seccomp", &second),
        ("no_sandbox", &none),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let opts = RunOptions {
                    dir: dir.path(),
                    timeout: Duration::from_secs(10),
                    cap: 4096,
                    cancel: None,
                    sandbox: (!walls.absent()).then_some((&plan, &scene)),
                    walls: Some(walls),
                    cgroup: true,
                };
                let ran = run("true", &opts).unwrap();
                assert_eq!(ran.status, Some(0), "{ran:?}");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
