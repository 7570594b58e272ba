//! Java exception classes as resim's attempt outcomes, for a retry's
//! `retryExceptions` and `ignoreExceptions`.
//!
//! resilience4j retries an exception when it is an instance of a class of
//! `retryExceptions` (a subclass counts; every exception when the list is
//! empty) and of no class of `ignoreExceptions` (RetryConfig.Builder
//! `createExceptionPredicate`, PredicateCreator: `isAssignableFrom`). resim's
//! attempts fail as `timeout`, `error`, `shed` or `rejected`; each stands
//! for the exceptions a Spring application sees for it ([`STANDS_FOR`]): the
//! time limiter's `java.util.concurrent.TimeoutException` (TimeLimiter
//! `createdTimeoutExceptionWithName`) or a client's read timeout; a refused
//! connection or a 500 answer; a 503 from a server whose queue is full;
//! resilience4j's own `RequestNotPermitted` and `BulkheadFullException`, or
//! a 429. An outcome is retried when one of its exceptions would be. A class
//! the import does not know (the application's own) covers none of them and
//! is named in the report.

/// An outcome of an attempt in resim, by its name in `retry.on`.
pub type Outcome = &'static str;

/// resim's outcomes, in its order.
pub const ORDER: [Outcome; 4] = ["timeout", "error", "shed", "rejected"];

const SPRING_REST: &str = "org.springframework.web.client.";
const WEB_CLIENT: &str = "org.springframework.web.reactive.function.client.";

/// (class, its superclass), `Outer.Inner` for nested classes.
const PARENTS: &[(&str, &str)] = &[
    ("java.lang.Exception", "java.lang.Throwable"),
    ("java.lang.RuntimeException", "java.lang.Exception"),
    ("java.io.IOException", "java.lang.Exception"),
    ("java.io.InterruptedIOException", "java.io.IOException"),
    (
        "java.net.SocketTimeoutException",
        "java.io.InterruptedIOException",
    ),
    ("java.net.SocketException", "java.io.IOException"),
    ("java.net.ConnectException", "java.net.SocketException"),
    ("java.net.http.HttpTimeoutException", "java.io.IOException"),
    (
        "java.util.concurrent.TimeoutException",
        "java.lang.Exception",
    ),
    (
        "org.springframework.core.NestedRuntimeException",
        "java.lang.RuntimeException",
    ),
    (
        "org.springframework.web.client.RestClientException",
        "org.springframework.core.NestedRuntimeException",
    ),
    (
        "org.springframework.web.client.ResourceAccessException",
        "org.springframework.web.client.RestClientException",
    ),
    (
        "org.springframework.web.client.RestClientResponseException",
        "org.springframework.web.client.RestClientException",
    ),
    (
        "org.springframework.web.client.HttpStatusCodeException",
        "org.springframework.web.client.RestClientResponseException",
    ),
    (
        "org.springframework.web.client.HttpServerErrorException",
        "org.springframework.web.client.HttpStatusCodeException",
    ),
    (
        "org.springframework.web.client.HttpClientErrorException",
        "org.springframework.web.client.HttpStatusCodeException",
    ),
    (
        "org.springframework.web.client.HttpServerErrorException.InternalServerError",
        "org.springframework.web.client.HttpServerErrorException",
    ),
    (
        "org.springframework.web.client.HttpServerErrorException.ServiceUnavailable",
        "org.springframework.web.client.HttpServerErrorException",
    ),
    (
        "org.springframework.web.client.HttpClientErrorException.TooManyRequests",
        "org.springframework.web.client.HttpClientErrorException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientException",
        "org.springframework.core.NestedRuntimeException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientRequestException",
        "org.springframework.web.reactive.function.client.WebClientException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientResponseException",
        "org.springframework.web.reactive.function.client.WebClientException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientResponseException.InternalServerError",
        "org.springframework.web.reactive.function.client.WebClientResponseException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientResponseException.ServiceUnavailable",
        "org.springframework.web.reactive.function.client.WebClientResponseException",
    ),
    (
        "org.springframework.web.reactive.function.client.WebClientResponseException.TooManyRequests",
        "org.springframework.web.reactive.function.client.WebClientResponseException",
    ),
    ("feign.FeignException", "java.lang.RuntimeException"),
    ("feign.RetryableException", "feign.FeignException"),
    (
        "feign.FeignException.FeignServerException",
        "feign.FeignException",
    ),
    (
        "feign.FeignException.FeignClientException",
        "feign.FeignException",
    ),
    (
        "feign.FeignException.InternalServerError",
        "feign.FeignException.FeignServerException",
    ),
    (
        "feign.FeignException.ServiceUnavailable",
        "feign.FeignException.FeignServerException",
    ),
    (
        "feign.FeignException.TooManyRequests",
        "feign.FeignException.FeignClientException",
    ),
    (
        "io.github.resilience4j.ratelimiter.RequestNotPermitted",
        "java.lang.RuntimeException",
    ),
    (
        "io.github.resilience4j.bulkhead.BulkheadFullException",
        "java.lang.RuntimeException",
    ),
    (
        "io.github.resilience4j.circuitbreaker.CallNotPermittedException",
        "java.lang.RuntimeException",
    ),
];

/// The exceptions each outcome stands for.
pub const STANDS_FOR: [(Outcome, &[&str]); 4] = [
    (
        "timeout",
        &[
            "java.util.concurrent.TimeoutException",
            "java.net.SocketTimeoutException",
            "java.net.http.HttpTimeoutException",
        ],
    ),
    (
        "error",
        &[
            "java.net.ConnectException",
            "org.springframework.web.client.ResourceAccessException",
            "org.springframework.web.client.HttpServerErrorException.InternalServerError",
            "org.springframework.web.reactive.function.client.WebClientRequestException",
            "org.springframework.web.reactive.function.client.WebClientResponseException.InternalServerError",
            "feign.RetryableException",
            "feign.FeignException.InternalServerError",
        ],
    ),
    (
        "shed",
        &[
            "org.springframework.web.client.HttpServerErrorException.ServiceUnavailable",
            "org.springframework.web.reactive.function.client.WebClientResponseException.ServiceUnavailable",
            "feign.FeignException.ServiceUnavailable",
        ],
    ),
    (
        "rejected",
        &[
            "io.github.resilience4j.ratelimiter.RequestNotPermitted",
            "io.github.resilience4j.bulkhead.BulkheadFullException",
            "org.springframework.web.client.HttpClientErrorException.TooManyRequests",
            "org.springframework.web.reactive.function.client.WebClientResponseException.TooManyRequests",
            "feign.FeignException.TooManyRequests",
        ],
    ),
];

/// The breaker's refusal: resim never retries a call its breaker refused.
const REFUSED: &str = "io.github.resilience4j.circuitbreaker.CallNotPermittedException";

/// A class name as the table spells it: nested classes with a dot
/// (Spring's `ClassUtils.forName` takes `Outer$Inner` and `Outer.Inner`).
fn canonical(name: &str) -> String {
    name.trim().replace('$', ".")
}

/// Whether `class` is `entry` or a subclass of it.
fn covers(entry: &str, class: &str) -> bool {
    let mut at = class;
    for _ in 0..PARENTS.len() + 1 {
        if at == entry {
            return true;
        }
        match PARENTS.iter().find(|(c, _)| *c == at) {
            Some((_, p)) => at = p,
            None => return false,
        }
    }
    false
}

fn known(name: &str) -> bool {
    PARENTS.iter().any(|(c, p)| *c == name || *p == name)
}

/// What a retry's exception lists make of resim's outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retried {
    /// The outcomes retried, in resim's order.
    pub on: Vec<Outcome>,
    /// How, for the ledger: each class and what it covers.
    pub how: String,
    /// Classes the import does not know (they cover no outcome).
    pub unknown: Vec<String>,
}

/// The outcomes retried under `retry` (empty: every exception) and
/// `ignore`.
pub fn retried(retry: &[String], ignore: &[String]) -> Retried {
    covered(retry, ignore, "retried", "not retried")
}

/// The outcomes `retry` covers (empty: every exception) less those whose
/// every exception `ignore` covers; `yes` and `no` say what the lists do,
/// for the report.
pub fn covered(retry: &[String], ignore: &[String], yes: &str, no: &str) -> Retried {
    let retry: Vec<String> = retry.iter().map(|c| canonical(c)).collect();
    let ignore: Vec<String> = ignore.iter().map(|c| canonical(c)).collect();
    let on: Vec<Outcome> = STANDS_FOR
        .iter()
        .filter(|(_, classes)| {
            classes.iter().any(|c| {
                (retry.is_empty() || retry.iter().any(|r| covers(r, c)))
                    && !ignore.iter().any(|i| covers(i, c))
            })
        })
        .map(|(o, _)| *o)
        .collect();
    let mut parts = Vec::new();
    let mut unknown = Vec::new();
    for (list, word) in [(&retry, yes), (&ignore, no)] {
        for e in list {
            let outcomes: Vec<Outcome> = STANDS_FOR
                .iter()
                .filter(|(_, classes)| classes.iter().any(|c| covers(e, c)))
                .map(|(o, _)| *o)
                .collect();
            let what = if e == REFUSED {
                "a call the breaker refused, which resim never retries (its breaker sits outside the retry)".to_string()
            } else if !known(e) {
                unknown.push(e.clone());
                "a class the import does not know: no outcome".to_string()
            } else if outcomes.is_empty() {
                "no outcome resim gives".to_string()
            } else {
                outcomes.join(", ")
            };
            parts.push(format!("{e} ({word}): {what}"));
        }
    }
    let how = format!(
        "{}; {yes}: {}",
        if parts.is_empty() {
            format!("no exception list: every exception is {yes}")
        } else {
            parts.join("; ")
        },
        if on.is_empty() {
            "none".to_string()
        } else {
            on.join(", ")
        }
    );
    Retried { on, how, unknown }
}

/// The classes each outcome stands for, for the docs.
pub fn table() -> String {
    let short = |c: &str| c.replace(SPRING_REST, "").replace(WEB_CLIENT, "");
    STANDS_FOR
        .iter()
        .map(|(o, classes)| {
            format!(
                "`{o}`: {}",
                classes
                    .iter()
                    .map(|c| format!("`{}`", short(c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(retry: &[&str], ignore: &[&str]) -> Vec<Outcome> {
        let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        retried(&s(retry), &s(ignore)).on
    }

    #[test]
    fn an_exception_list_retries_the_outcomes_its_classes_cover() {
        assert_eq!(on(&[], &[]), ORDER, "no list: every exception");
        assert_eq!(
            on(&["java.util.concurrent.TimeoutException"], &[]),
            ["timeout"]
        );
        // IOException: a read timeout and a refused connection
        assert_eq!(on(&["java.io.IOException"], &[]), ["timeout", "error"]);
        assert_eq!(
            on(
                &["org.springframework.web.client.HttpServerErrorException"],
                &[]
            ),
            ["error", "shed"]
        );
        assert_eq!(
            on(
                &["org.springframework.web.client.HttpServerErrorException$ServiceUnavailable"],
                &[]
            ),
            ["shed"],
            "a nested class written with `$`"
        );
        assert_eq!(
            on(&["java.lang.RuntimeException"], &[]),
            ["error", "shed", "rejected"],
            "TimeoutException is checked"
        );
        assert_eq!(
            on(
                &["java.lang.Exception"],
                &["java.util.concurrent.TimeoutException"]
            ),
            ["timeout", "error", "shed", "rejected"],
            "a read timeout is still retried"
        );
        assert_eq!(
            on(
                &[],
                &[
                    "java.util.concurrent.TimeoutException",
                    "java.io.IOException"
                ]
            ),
            ["error", "shed", "rejected"]
        );
    }

    #[test]
    fn unknown_classes_and_the_breakers_refusal_are_named() {
        let r = retried(
            &[
                "com.acme.BackendDown".into(),
                "io.github.resilience4j.circuitbreaker.CallNotPermittedException".into(),
            ],
            &[],
        );
        assert!(r.on.is_empty());
        assert_eq!(r.unknown, ["com.acme.BackendDown"]);
        assert!(r.how.contains("does not know"), "{}", r.how);
        assert!(r.how.contains("never retries"), "{}", r.how);
    }
}
