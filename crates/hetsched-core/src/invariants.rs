//! Invariants of the scheduler state, checked by tests after every event.
