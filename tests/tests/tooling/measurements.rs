//! The harness's timing helpers (`tests::measure`): medians and
//! percentiles of samples, and the shell lines a measurement is shown as.

use std::time::Duration;

use tests::measure::*;
use tests::shell_quote;

#[test]
fn medians_of_odd_and_even_counts() {
    let samples =
        |values: &[u64]| Samples { durations: values.iter().map(|&v| Duration::from_millis(v)).collect() };
    assert_eq!(samples(&[5, 1, 3]).median(), Duration::from_millis(3));
    assert_eq!(samples(&[4, 1, 3, 2]).median(), Duration::from_micros(2500));
    assert_eq!(samples(&[]).median(), Duration::ZERO);
    assert_eq!(samples(&[4, 1, 3, 2]).percentile(0.99), Duration::from_millis(4));
    assert_eq!(samples(&[4, 1, 3, 2]).percentile(0.5), Duration::from_millis(2));
}

#[test]
fn shell_lines_quote_words_and_show_long_argument_lists_short() {
    let line = Invocation::new("/bin/cat").args(["a b", "c"]).shell_line();
    assert_eq!(line, "/bin/cat 'a b' c > /dev/null");
    let line = Invocation::new("/bin/cat").args(["1.json", "2.json"]).shown_as("cat *.json").shell_line();
    assert_eq!(line, "cat *.json > /dev/null");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
}
