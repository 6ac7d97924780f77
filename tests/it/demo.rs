//! The demo generator and the bundled demo state repo.
