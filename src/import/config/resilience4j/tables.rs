//! The fields of a resilience4j Spring Boot configuration, as data: what
//! each means to resilience4j (its `Common*ConfigurationProperties` classes
//! in resilience4j-framework-common, which Spring Boot binds), its default
//! there and what the import makes of it. Spring Boot's
//! `@ConfigurationProperties` leave `ignoreUnknownFields` at true, so a key
//! resilience4j does not define is ignored by the application: here it is
//! ignored too, with a warning naming the closest field.

use crate::import::config::spec::{Binding, Field, Table, Unknown};

/// Why an unknown key is ignored.
const SPRING_IGNORES: &str =
    "Spring Boot binds no property of that name and ignores it (`ignoreUnknownFields`)";

const EVENTS: &str = "event buffers and stack traces: monitoring, no behaviour resim models";
const HEALTH: &str = "Spring health endpoints: monitoring, no behaviour";
const BASE: &str = "the config it starts from: its fields, then the instance's own";

/// The `baseConfig` of every module's instances.
const fn base() -> Field {
    Field::code(
        "baseConfig",
        "the config (under `configs`) whose fields this one starts from",
        "",
        BASE,
    )
}

/// The rule of retry's wait, for its fields.
pub const WAIT_RULE: &str = "the wait is built where `waitDuration` is set: the nearest of the instance and the configs it inherits that sets it; there `enableExponentialBackoff`, `enableRandomizedWait`, `exponentialBackoffMultiplier` and `exponentialMaxWaitDuration` are that level's or inherited, `randomizedWaitFactor` is that level's only (CommonRetryConfigurationProperties.configureRetryIntervalFunction and ConfigUtils.mergePropertiesIfAny). Constant: `kind = \"constant\"`; exponential: `kind = \"exponential\"`, `multiplier`, `cap_ms` (resilience4j rounds each step down to a whole ms); randomized: `jitter_factor` (the wait w drawn from U(w (1 - f), w (1 + f)); IntervalFunction.randomize draws up to 1 ms more)";

/// A retry instance (or config).
pub static RETRY: Table = Table {
    at: "resilience4j.retry.instances.NAME",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        base(),
        Field::maps(
            "maxAttempts",
            "attempts in all, the first included (>= 1)",
            "policies.{}.retry.max_attempts",
            "as written (RetryImpl: a failure after maxAttempts attempts ends the call)",
        )
        .or("3", "3 (RetryConfig.DEFAULT_MAX_ATTEMPTS)"),
        Field::code(
            "waitDuration",
            "the wait before each retry (the first one's, when exponential)",
            "policies.{}.retry.backoff",
            WAIT_RULE,
        )
        .or(
            "500ms",
            "a constant 500 ms (RetryConfig.DEFAULT_WAIT_DURATION), whatever the other wait fields say: they act only where waitDuration is set",
        ),
        Field::code(
            "enableExponentialBackoff",
            "the wait grows: waitDuration x multiplier^(n-1) before retry n",
            "policies.{}.retry.backoff.kind",
            "`exponential` where it applies (see `waitDuration`)",
        ),
        Field::code(
            "exponentialBackoffMultiplier",
            "the growth per retry (> 0)",
            "policies.{}.retry.backoff.multiplier",
            "as written where it applies; absent there: 1.5 (IntervalFunction.DEFAULT_MULTIPLIER)",
        ),
        Field::code(
            "exponentialMaxWaitDuration",
            "the longest wait",
            "policies.{}.retry.backoff.cap_ms",
            "as written where it applies; absent there: no cap, approximated as 1 hour (longer than any run)",
        ),
        Field::code(
            "enableRandomizedWait",
            "each wait drawn around its value",
            "policies.{}.retry.backoff.jitter_factor",
            "`jitter_factor` where it applies (see `waitDuration`)",
        ),
        Field::code(
            "randomizedWaitFactor",
            "how far the wait is drawn from its value, in [0, 1)",
            "policies.{}.retry.backoff.jitter_factor",
            "as written where it applies; absent there: 0.5 (IntervalFunction.DEFAULT_RANDOMIZATION_FACTOR)",
        ),
        Field::code(
            "retryExceptions",
            "the exception classes retried (and their subclasses); none: every exception",
            "policies.{}.retry.on",
            "approximated: the outcomes whose exceptions the list covers (see the exception table below)",
        )
        .or(
            "(none)",
            "every failure is retried: `on = [\"timeout\", \"error\", \"shed\", \"rejected\"]`",
        ),
        Field::code(
            "ignoreExceptions",
            "the exception classes never retried (and their subclasses), over retryExceptions",
            "policies.{}.retry.on",
            "approximated: the outcomes whose every exception the list covers leave `on`",
        ),
        Field::approx(
            "retryExceptionPredicate",
            "a Java class deciding which exceptions are retried, besides retryExceptions",
            "",
            "resim cannot run Java: `on` follows the exception lists alone",
        ),
        Field::approx(
            "resultPredicate",
            "a Java class deciding which results are retried",
            "",
            "resim's answers carry no result beyond their outcome: an `ok` answer is never retried",
        ),
        Field::approx(
            "intervalBiFunction",
            "a Java class computing each wait",
            "",
            "resim cannot run Java: the wait follows the wait fields",
        ),
        Field::ignored(
            "consumeResultBeforeRetryAttempt",
            "a Java callback run before a retry of a result",
            "a callback: no behaviour resim models",
        ),
        Field::ignored(
            "failAfterMaxAttempts",
            "throw MaxRetriesExceededException when retried results exhaust the attempts",
            "it acts on results retried by resultPredicate (RetryImpl.onComplete); a failure's last attempt ends the call either way, as in resim",
        ),
        Field::ignored(
            "eventConsumerBufferSize",
            "events kept for the actuator",
            EVENTS,
        ),
        Field::ignored(
            "writableStackTraceEnabled",
            "stack traces on its exceptions",
            EVENTS,
        ),
    ],
};

/// A circuit breaker instance (or config).
pub static BREAKER: Table = Table {
    at: "resilience4j.circuitbreaker.instances.NAME",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        base(),
        Field::maps(
            "failureRateThreshold",
            "the failure rate in percent, in [1, 100], at which it opens",
            "policies.{}.breaker.failure_rate",
            "percent as a share: it opens when failures / counted calls >= it (CircuitBreakerMetrics.checkIfThresholdsExceeded)",
        )
        .or("50", "0.5"),
        Field::code(
            "slidingWindowType",
            "COUNT_BASED: the last N calls; TIME_BASED: the calls of the last N seconds",
            "policies.{}.breaker.window",
            "`{ count = N }`, or `{ ms = N x 1000 }` (approximated: resilience4j counts whole epoch seconds, the current one and the N - 1 before, SlidingTimeWindowMetrics)",
        )
        .or("COUNT_BASED", "`window = { count = N }`"),
        Field::code(
            "slidingWindowSize",
            "N: calls (COUNT_BASED) or seconds (TIME_BASED)",
            "policies.{}.breaker.window",
            "as `slidingWindowType` says",
        )
        .or("100", "100"),
        Field::code(
            "minimumNumberOfCalls",
            "calls counted before the failure rate is computed",
            "policies.{}.breaker.min_calls",
            "COUNT_BASED: min(minimumNumberOfCalls, slidingWindowSize), the minimum resilience4j applies (CircuitBreakerMetrics: a count window never holds more than its size); TIME_BASED: as written",
        )
        .or(
            "100",
            "min(100, slidingWindowSize) for a COUNT_BASED window; 100 for TIME_BASED",
        ),
        Field::code(
            "waitDurationInOpenState",
            "how long it stays open (>= 1 ms)",
            "policies.{}.breaker.open_ms",
            "as written at the nearest level that sets it (CommonCircuitBreakerConfigurationProperties.configureCircuitBreakerOpenStateIntervalFunction)",
        )
        .or("60s", "60000 (CircuitBreakerConfig.DEFAULT_WAIT_DURATION_IN_OPEN_STATE)"),
        Field::approx(
            "permittedNumberOfCallsInHalfOpenState",
            "trial calls after the open state",
            "policies.{}.breaker.half_open_calls",
            "resim closes when every trial succeeds and reopens at the first failure; resilience4j decides after min(minimumNumberOfCalls, trials) trials by the failure rate (CircuitBreakerStateMachine.HalfOpenState)",
        )
        .or("10", "10, approximated as a written value is"),
        Field::code(
            "enableExponentialBackoff",
            "each opening lasts longer: waitDurationInOpenState x multiplier^(n-1)",
            "policies.{}.breaker.open_ms",
            "approximated: resim's breaker stays open `open_ms` each time, the first opening's",
        ),
        Field::code(
            "exponentialBackoffMultiplier",
            "the open state's growth per opening",
            "policies.{}.breaker.open_ms",
            "approximated with enableExponentialBackoff",
        ),
        Field::code(
            "exponentialMaxWaitDurationInOpenState",
            "the longest open state",
            "policies.{}.breaker.open_ms",
            "approximated with enableExponentialBackoff",
        ),
        Field::code(
            "enableRandomizedWait",
            "each open state drawn around waitDurationInOpenState",
            "policies.{}.breaker.open_ms",
            "approximated: resim's open state lasts its value, not a draw around it",
        ),
        Field::code(
            "randomizedWaitFactor",
            "how far the open state is drawn from its value",
            "policies.{}.breaker.open_ms",
            "approximated with enableRandomizedWait",
        ),
        Field::ignored(
            "slowCallRateThreshold",
            "the share of slow calls (percent) at which it opens (default 100)",
            "resim's breaker counts failures, not slow calls (with the defaults resilience4j opens on slow calls only when every call takes over 60 s)",
        ),
        Field::ignored(
            "slowCallDurationThreshold",
            "how long a call takes to be slow (default 60 s)",
            "resim's breaker counts failures, not slow calls",
        ),
        Field::code(
            "maxWaitDurationInHalfOpenState",
            "the longest half-open state before it moves to transitionToStateAfterWaitDuration (0: no limit)",
            "",
            "0: as resim, whose half-open state lasts until its trials end; above 0: approximated so",
        ),
        Field::ignored(
            "transitionToStateAfterWaitDuration",
            "where a half-open state that waited maxWaitDurationInHalfOpenState goes",
            "resim's half-open state lasts until its trials end",
        ),
        Field::ignored(
            "automaticTransitionFromOpenToHalfOpenEnabled",
            "move to half-open by a timer rather than at the next call",
            "no difference to calls: either way the first call after the wait is a trial, as in resim",
        ),
        Field::code(
            "initialState",
            "the state it starts in",
            "policies.{}.breaker",
            "CLOSED: as resim; DISABLED and METRICS_ONLY never open: no breaker; OPEN, FORCED_OPEN, HALF_OPEN: approximated, resim's breaker starts closed",
        ),
        Field::ignored(
            "recordExceptions",
            "the exception classes that count as failures (default: all)",
            "resim's breaker has no outcome filter: it counts timeouts, errors and sheds as failures, rejections not",
        ),
        Field::ignored(
            "ignoreExceptions",
            "the exception classes that count neither way",
            "resim's breaker has no outcome filter: it counts timeouts, errors and sheds as failures, rejections not",
        ),
        Field::ignored(
            "recordFailurePredicate",
            "a Java class deciding which exceptions are failures",
            "resim's breaker has no outcome filter, and cannot run Java",
        ),
        Field::ignored(
            "ignoreExceptionPredicate",
            "a Java class deciding which exceptions are ignored",
            "resim's breaker has no outcome filter, and cannot run Java",
        ),
        Field::ignored(
            "recordResultPredicate",
            "a Java class deciding which results are failures",
            "resim's breaker counts failed outcomes, not results",
        ),
        Field::ignored(
            "ignoreClassBindingExceptions",
            "start even when an exception class cannot be loaded",
            "the import names every class it does not know either way",
        ),
        Field::ignored("registerHealthIndicator", "a health endpoint", HEALTH),
        Field::ignored("allowHealthIndicatorToFail", "a health endpoint", HEALTH),
        Field::ignored(
            "eventConsumerBufferSize",
            "events kept for the actuator",
            EVENTS,
        ),
        Field::ignored(
            "writableStackTraceEnabled",
            "stack traces on its exceptions",
            EVENTS,
        ),
    ],
};

/// A time limiter instance (or config).
pub static TIME: Table = Table {
    at: "resilience4j.timelimiter.instances.NAME",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        base(),
        Field::code(
            "timeoutDuration",
            "how long a call may take",
            "policies.{}.timeout_ms",
            "each attempt's own timeout: the time limiter sits inside the retry (Spring's aspect order: Retry, CircuitBreaker, RateLimiter, TimeLimiter, Bulkhead); when `timeLimiterAspectOrder` puts it outside the retry, the whole call's deadline, the workload's `timeout_ms`",
        )
        .or("1s", "1000 (TimeLimiterConfig)"),
        Field::ignored(
            "cancelRunningFuture",
            "cancel the call's future at the timeout (default true)",
            "cancelling the client's future does not stop the server's work: in resim a timed-out attempt's work goes on at the server too, unless the server has `abandon = true`",
        ),
        Field::ignored(
            "eventConsumerBufferSize",
            "events kept for the actuator",
            EVENTS,
        ),
    ],
};

/// A rate limiter instance (or config).
pub static LIMITER: Table = Table {
    at: "resilience4j.ratelimiter.instances.NAME",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        base(),
        Field::maps(
            "limitForPeriod",
            "permits per refresh period (>= 1)",
            "limiters.{}.limit",
            "as written: `algorithm = \"fixed-window\"`, the permits refilled at each period's start (AtomicRateLimiter), at the backend's entrance (in the client there: the same decisions for one client)",
        )
        .or("50", "50"),
        Field::maps(
            "limitRefreshPeriod",
            "the period after which the permits are refilled (>= 1 ns)",
            "limiters.{}.window_ms",
            "as written",
        )
        .or("500ns", "0.0005"),
        Field::maps(
            "timeoutDuration",
            "how long a call waits for a permit",
            "limiters.{}.max_delay_ms",
            "above 0: `mode = \"throttle\"`, `overflow = \"hold\"`: a call that gets a permit within it waits for it, any other waits it out and fails (AtomicRateLimiter.waitForPermissionIfNecessary); 0: refused at once",
        )
        .or("5s", "5000, `mode = \"throttle\"`, `overflow = \"hold\"`"),
        Field::ignored(
            "subscribeForEvents",
            "events for the actuator",
            EVENTS,
        ),
        Field::ignored("registerHealthIndicator", "a health endpoint", HEALTH),
        Field::ignored("allowHealthIndicatorToFail", "a health endpoint", HEALTH),
        Field::ignored(
            "eventConsumerBufferSize",
            "events kept for the actuator",
            EVENTS,
        ),
        Field::ignored(
            "writableStackTraceEnabled",
            "stack traces on its exceptions",
            EVENTS,
        ),
    ],
};

/// A bulkhead instance (or config).
pub static BULKHEAD: Table = Table {
    at: "resilience4j.bulkhead.instances.NAME",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        base(),
        Field::approx(
            "maxConcurrentCalls",
            "calls in flight at once (>= 1)",
            "limiters.{}-bulkhead.limit",
            "a fixed concurrency limit (`kind = \"concurrency\"`, `algorithm = \"fixed\"`) at the backend's entrance: calls past it are refused (in the client there: the same for one client)",
        )
        .or("25", "25"),
        Field::code(
            "maxWaitDuration",
            "how long a call waits for a place",
            "",
            "0: refused at once, as resim's concurrency limits refuse; above 0: approximated as 0",
        )
        .or("0", "refused at once, as resim's concurrency limits refuse"),
        Field::ignored(
            "eventConsumerBufferSize",
            "events kept for the actuator",
            EVENTS,
        ),
        Field::ignored(
            "writableStackTraceEnabled",
            "stack traces on its exceptions",
            EVENTS,
        ),
    ],
};

const ORDER: &str = "the aspects' order (lower runs outside): by default Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))";
const ORDER_RULE: &str = "read with the other modules' orders: where it puts the circuit breaker outside the retry, resim's breaker (which counts calls after their retries) is exact; where it puts the time limiter outside the retry, `timeoutDuration` is the call's deadline";
const NAMES: &str = "the instances by name: each name is a backend, a server with a route `/NAME` and a workload calling it through `[policies.NAME]`";
const CONFIGS: &str = "shared configs by name, inherited through `baseConfig` or as `default` (the inheritance rules are above the tables)";
const OLD_NAMES: &str = "the older name of `instances` (`getBackends()` returns the same map)";
const TAGS: &str = "metric tags: no behaviour";
const METRICS: &str =
    "metrics switches (`metrics.enabled`, `metrics.legacy.enabled`): no behaviour";

/// A module's table: `configs`, `instances` (and its older name) of
/// `instance`, its aspect order and what has no behaviour.
macro_rules! module {
    ($name:ident, $at:expr, $instance:expr, $order:expr, [$($old:expr),*]) => {
        #[doc = concat!("The `", $at, "` key.")]
        pub static $name: Table = Table {
            at: $at,
            binding: Binding::Relaxed,
            unknown: Unknown::Ignore(SPRING_IGNORES),
            fields: &[
                Field::named("instances", NAMES, $instance),
                $(Field::named($old, OLD_NAMES, $instance),)*
                Field::named("configs", CONFIGS, $instance),
                Field::code($order, ORDER, "", ORDER_RULE),
                Field::ignored("tags", "tags on its metrics", TAGS),
                Field::ignored("metrics", "its metrics", METRICS),
            ],
        };
    };
}

module!(
    RETRY_MODULE,
    "resilience4j.retry",
    &RETRY,
    "retryAspectOrder",
    ["backends"]
);
module!(
    BREAKER_MODULE,
    "resilience4j.circuitbreaker",
    &BREAKER,
    "circuitBreakerAspectOrder",
    ["backends"]
);
module!(
    TIME_MODULE,
    "resilience4j.timelimiter",
    &TIME,
    "timeLimiterAspectOrder",
    []
);
module!(
    LIMITER_MODULE,
    "resilience4j.ratelimiter",
    &LIMITER,
    "rateLimiterAspectOrder",
    ["limiters"]
);
module!(
    BULKHEAD_MODULE,
    "resilience4j.bulkhead",
    &BULKHEAD,
    "bulkheadAspectOrder",
    ["backends"]
);

/// The `resilience4j` key.
pub static TOP: Table = Table {
    at: "resilience4j",
    binding: Binding::Relaxed,
    unknown: Unknown::Ignore(SPRING_IGNORES),
    fields: &[
        Field::nested("retry", "retries", &RETRY_MODULE),
        Field::nested("circuitbreaker", "circuit breakers", &BREAKER_MODULE),
        Field::nested("timelimiter", "time limits", &TIME_MODULE),
        Field::nested("ratelimiter", "rate limiters", &LIMITER_MODULE),
        Field::nested("bulkhead", "semaphore bulkheads", &BULKHEAD_MODULE),
        Field::ignored(
            "thread-pool-bulkhead",
            "bulkheads that run calls on a pool of client threads",
            "resim has no client thread pools (a server's slots and queue are the nearest)",
        ),
        Field::ignored(
            "scheduled",
            "the executor that runs delayed retries",
            "threads: no behaviour resim models",
        ),
        Field::ignored(
            "thread",
            "platform or virtual threads",
            "threads: no behaviour resim models",
        ),
        Field::ignored(
            "micrometer",
            "timers for the actuator",
            "metrics: no behaviour",
        ),
    ],
};

/// The format's tables, for the docs: the top, then each instance table
/// (the modules' tables name them).
pub static TABLES: [&Table; 1] = [&TOP];
