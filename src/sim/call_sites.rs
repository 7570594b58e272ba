//! Call sites: every (caller, target) pair a model can call, numbered once per
//! run, so that the time series counts each site's first tries and attempts by
//! index ([`timeseries`](super::timeseries), `timeseries_calls.csv`).
//!
//! A site's caller is a workload (its requests, to the service owning their
//! route, or to no service at all: a 404) or a service (its plan's calls, to a
//! service or a dependency, with a client policy or without). Sites are in the
//! model's order: workloads, then services, in declaration order; each caller's
//! targets services first, then dependencies, then no service.
//!
//! How a call is counted at its site (only a run with a time series builds any
//! of it):
//! - a call through a client policy is counted by its policy state, which
//!   keeps its calls' first tries and attempts anyway (the `calls` table's
//!   books) and the site of its (caller, target), resolved once when the
//!   state is made: the time series reads the states' books at each window's
//!   end, as it reads a server's, so a policy's attempts cost nothing more
//!   per attempt. In a scenario with policies every call is a policy call
//!   (a call without a `call_policy` takes the `none` policy), a workload's
//!   request too;
//! - a workload's request without a policy (a scenario without policies), or
//!   to a route no service owns (no policy call is made), is counted when
//!   sent, its site found in a table by (workload, route);
//! - a plan's call without a policy is counted when made, its site found by a
//!   scan of its service's targets (a handful).

use crate::model::{DependencyId, Model, RouteId, ServiceId, Target, Workload};

/// The site of nothing: a call no site counts (a request no workload sent).
pub(crate) const NO_SITE: u32 = u32::MAX;

/// Who calls at a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum From {
    Workload(usize),
    Service(ServiceId),
}

/// What a site calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum To {
    Service(ServiceId),
    Dependency(DependencyId),
    /// A route no service owns (the request is answered 404).
    NoService,
}

impl To {
    fn of(target: Target) -> To {
        match target {
            Target::Service(s) => To::Service(s),
            Target::Dependency(d) => To::Dependency(d),
        }
    }
}

/// The target name of a workload's requests to a route no service owns.
pub const NO_SERVICE: &str = "(no service)";

/// The call sites of one model, and where each call finds its own.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallSites {
    sites: Vec<(From, To)>,
    /// Each site's caller and target, by name.
    names: Vec<(String, String)>,
    /// Routes in the model (the stride of `by_route`).
    routes: usize,
    /// `[workload * routes + route]`: the site a workload's request on a route
    /// counts at when sent, and whether it is its own attempt there
    /// ([`NO_SITE`]: counted by its policy, or a route the workload never
    /// sends to).
    by_route: Vec<(u32, bool)>,
    /// Some request is counted when sent (some entry of `by_route` is a site).
    counted_when_sent: bool,
    /// Per service: its plan's targets and their sites.
    by_service: Vec<Vec<(Target, u32)>>,
}

/// A site's caller and target, by name.
fn name_of(model: &Model, (from, to): (From, To)) -> (String, String) {
    let caller = match from {
        From::Workload(w) => model.workloads[w].name.clone(),
        From::Service(s) => model.services[s].name.clone(),
    };
    let target = match to {
        To::Service(s) => model.services[s].name.clone(),
        To::Dependency(d) => model.dependencies[d].name.clone(),
        To::NoService => NO_SERVICE.to_string(),
    };
    (caller, target)
}

/// The routes a workload sends to.
fn routes_of(w: &Workload) -> Vec<RouteId> {
    match w {
        Workload::Sequence { template, .. }
        | Workload::Open { template, .. }
        | Workload::Closed { template, .. } => vec![template.route],
        Workload::Ladder(l) => vec![l.template.route],
        Workload::Script { groups, .. } => groups.iter().flat_map(|g| g.routes.clone()).collect(),
        Workload::Probe { routes, .. } => (0..*routes).collect(),
    }
}

impl CallSites {
    /// Every call site of `model`.
    pub fn of(model: &Model) -> CallSites {
        let mut sites: Vec<(From, To)> = Vec::new();
        let owner = |r: RouteId| model.routes[r].service.map_or(To::NoService, To::Service);
        for (w, named) in model.workloads.iter().enumerate() {
            for r in routes_of(&named.workload) {
                sites.push((From::Workload(w), owner(r)));
            }
        }
        for (s, service) in model.services.iter().enumerate() {
            let Some(plan) = service.handler.plan() else {
                continue;
            };
            for call in plan.branches.iter().flat_map(|b| &b.calls) {
                sites.push((From::Service(s), To::of(call.target)));
            }
        }
        sites.sort();
        sites.dedup();
        let find =
            |site: (From, To)| -> u32 { sites.binary_search(&site).map_or(NO_SITE, |i| i as u32) };
        let routes = model.routes.len();
        let mut by_route = vec![(NO_SITE, false); model.workloads.len() * routes];
        for (w, named) in model.workloads.iter().enumerate() {
            let policy = named.call_policy.is_some();
            for r in routes_of(&named.workload) {
                let to = owner(r);
                // a policy counts its calls; a request to no service makes none
                if !policy || to == To::NoService {
                    by_route[w * routes + r] = (find((From::Workload(w), to)), !policy);
                }
            }
        }
        let by_service = model
            .services
            .iter()
            .enumerate()
            .map(|(s, service)| {
                let mut targets: Vec<(Target, u32)> = Vec::new();
                for call in service
                    .handler
                    .plan()
                    .into_iter()
                    .flat_map(|p| &p.branches)
                    .flat_map(|b| &b.calls)
                {
                    if !targets.iter().any(|(t, _)| *t == call.target) {
                        targets.push((call.target, find((From::Service(s), To::of(call.target)))));
                    }
                }
                targets
            })
            .collect();
        CallSites {
            names: sites.iter().map(|&site| name_of(model, site)).collect(),
            counted_when_sent: by_route.iter().any(|&(site, _)| site != NO_SITE),
            sites,
            routes,
            by_route,
            by_service,
        }
    }

    /// How many sites the model has.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Each site's caller and target, by name, in site order.
    pub fn names(&self) -> &[(String, String)] {
        &self.names
    }

    /// Whether some workload's request is counted when sent (see
    /// [`Self::of_request`]); none, in a scenario with policies whose routes
    /// all have a service.
    #[inline]
    pub fn counted_when_sent(&self) -> bool {
        self.counted_when_sent
    }

    /// The site a request workload `workload` sends on `route` counts at when
    /// sent ([`NO_SITE`]: its policy counts it), and whether the request is
    /// its own attempt there (the workload has no `call_policy`).
    #[inline]
    pub fn of_request(&self, workload: u32, route: RouteId) -> (u32, bool) {
        self.by_route
            .get(workload as usize * self.routes + route)
            .copied()
            .unwrap_or((NO_SITE, false))
    }

    /// The site of workload `workload`'s calls to `target` (its policy's).
    pub fn of_workload_call(&self, workload: u32, target: Target) -> u32 {
        let site = (From::Workload(workload as usize), To::of(target));
        self.sites
            .binary_search(&site)
            .map_or(NO_SITE, |i| i as u32)
    }

    /// The site of `service`'s calls to `target`.
    #[inline]
    pub fn of_call(&self, service: ServiceId, target: Target) -> u32 {
        self.by_service
            .get(service)
            .and_then(|ts| ts.iter().find(|(t, _)| *t == target))
            .map_or(NO_SITE, |&(_, site)| site)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// Sites come in the model's order, once each, and every call finds its own.
    #[test]
    fn sites_are_in_model_order_and_each_call_finds_its_own() {
        let text = r#"
[scenario]
name = "sites"
[services.front]
routes = ["/front"]
handler = { type = "plan", budget = 100, branches = [
  { name = "a", calls = ["store", "back"] },
  { name = "b", calls = ["store"] },
] }
[services.back]
routes = ["/back"]
handler = { type = "server", slots = 1, queue = 0, service = { constant = 5 } }
[dependencies.store]
latency = { constant = 1 }
[workloads.web]
type = "open"
rate_rps = 10
requests = 5
route = "/front"
[workloads.direct]
type = "open"
rate_rps = 10
requests = 5
route = "/back"
[workloads.lost]
type = "script"
unowned_routes = ["/nowhere"]
groups = [{ count = 4, routes = ["/back", "/nowhere"] }]
"#;
        let s = load_str(text, Path::new("sites.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = &s.rows[0].model;
        let sites = CallSites::of(model);
        let names: Vec<String> = sites
            .names()
            .iter()
            .map(|(c, t)| format!("{c}->{t}"))
            .collect();
        assert_eq!(
            names,
            [
                "web->front",
                "direct->back",
                "lost->back",
                "lost->(no service)",
                "front->back",
                "front->store"
            ]
        );
        let front = model
            .services
            .iter()
            .position(|s| s.name == "front")
            .unwrap();
        let back = model
            .services
            .iter()
            .position(|s| s.name == "back")
            .unwrap();
        assert_eq!(sites.of_call(front, Target::Dependency(0)), 5);
        assert_eq!(sites.of_call(front, Target::Service(back)), 4);
        assert_eq!(sites.of_call(back, Target::Dependency(0)), NO_SITE);
        let route = |path: &str| model.routes.iter().position(|r| r.path == path).unwrap();
        assert_eq!(sites.of_request(0, route("/front")), (0, true));
        assert_eq!(sites.of_request(1, route("/back")), (1, true));
        assert_eq!(sites.of_request(2, route("/back")), (2, true));
        assert_eq!(sites.of_request(2, route("/nowhere")), (3, true));
        assert_eq!(
            sites.of_request(0, route("/back")).0,
            NO_SITE,
            "web never sends there"
        );
        assert_eq!(sites.of_workload_call(1, Target::Service(back)), 1);
        // with policies every request is a policy call, counted by its state,
        // but one to a route nobody owns (no call is made: a first try alone)
        let text = format!("{text}[policies.p]\nretry = {{ max_attempts = 2 }}\n");
        let s = load_str(&text, Path::new("sites.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let sites = CallSites::of(&s.rows[0].model);
        assert_eq!(sites.len(), 6);
        assert_eq!(sites.of_request(2, route("/back")).0, NO_SITE);
        assert_eq!(sites.of_request(2, route("/nowhere")), (3, false));
        assert!(sites.counted_when_sent());
    }
}
