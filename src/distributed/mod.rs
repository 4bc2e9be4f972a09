//! The distributed engine (`--engine restate=URL`, `baton worker`; issue 21,
//! `docs/distributed.md`): a run's steps execute on workers behind a Restate
//! server, while the run itself stays where it was started.
//!
//! Why this split: the coordinator is Baton's own workflow loop, unchanged — its
//! journal, lock, bounds, budget, asks, joins and trace — so `status`, `logs
//! --follow`, `report`, `serve`, `list` and the diagram read a distributed run as
//! they read a local one. Moving the loop into a Restate Virtual Object would make
//! every line of it replay-deterministic and need a second event pipeline; Baton's
//! journal already gives record-before-act and one writer per run. Restate carries
//! the *steps*: each is one invocation of the stateless `BatonStep` service under
//! the idempotency key `RUN/AGENT/STEP/ATTEMPT`, run on a worker inside one
//! journaled action with the same executors a local run uses. Restate brings the
//! retries on another worker when one dies (workers behind one balancer URI),
//! durability across a server restart, and dedupe: a coordinator that dies and is
//! resumed re-sends the key and attaches to the step instead of running it again.
//!
//! Layers: `protocol` (the request and reply, versions, bounds), `engine` (the
//! flag), `ingress` (the coordinator's HTTP client), `remote_executor` (a
//! `StateExecutor` that sends steps), `step_service` and `worker` (the worker side).

pub(crate) mod engine;
pub(crate) mod ingress;
pub(crate) mod protocol;
pub(crate) mod remote_executor;
pub(crate) mod step_service;
pub(crate) mod worker;
