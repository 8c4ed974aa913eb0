// Command trainer builds sqpredict's data sets and models: it generates synthetic
// histories, converts, validates and imports real ones, extracts features, fits and
// scores single models, runs the speculation math, and trains, evaluates and publishes
// model bundles, once or on a weekly schedule.
//
// Run "trainer help" for the list of subcommands and "trainer CMD -h" for the flags of one.
package main
