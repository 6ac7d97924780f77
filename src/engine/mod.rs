//! The forecasting engine: calendars, the deterministic scheduler and the Monte Carlo simulation.
//!
//! Pure: plain data in, plain data out; no I/O and no clock (day 0 is whatever date the caller says).
//! Times are hours since the start of day 0: work on day `d` happens in `[24·d, 24·d + capacity]`, so a
//! person with a 6-hour day finishes a 6-hour task at `24·d + 6`. Everything is indexed densely (people
//! and tasks by position) so the Monte Carlo loop touches only flat arrays.

pub mod calendar;
pub mod calibrate;
pub mod fate;
pub mod montecarlo;
pub mod schedule;
pub mod tjp;

pub use calendar::{Calendar, CapacityOverride, DayIndex, PersonCalendarSpec};
pub use calibrate::{Bias, Calibration, Sample};
pub use fate::{Exposure, FateFeatures, FateModel};
pub use montecarlo::{Adaptive, Distribution, Fate, MonteCarlo, Percentiles, SimulationResult};
pub use schedule::{Prepared, Project, Schedule, ScheduleError, Task};
