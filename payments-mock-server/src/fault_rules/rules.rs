//! The installed rules of one book and how a request finds the first it
//! meets: in creation order, through the positions of the rules by the
//! reference they name.

use std::collections::HashMap;

use super::{Facts, Installed, Verdict};

/// The installed rules, in creation order, and how to find those a
/// request may meet.
#[derive(Debug, Default)]
pub(super) struct Rules {
    pub(super) installed: Vec<Installed>,
    /// Rules made so far (creation numbers).
    pub(super) made: u64,
    /// The positions of the rules that name no reference, and of those
    /// that name each reference: a request whose reference is known meets
    /// only those two lists (100 rules for other orders cost it nothing).
    generic: Vec<usize>,
    by_reference: HashMap<String, Vec<usize>>,
}

impl Rules {
    /// Rebuilds the positions (after a rule came or went).
    pub(super) fn index(&mut self) {
        self.generic.clear();
        self.by_reference.clear();
        for (i, installed) in self.installed.iter().enumerate() {
            match &installed.rule.matching.reference_no {
                None => self.generic.push(i),
                Some(r) => self.by_reference.entry(r.clone()).or_default().push(i),
            }
        }
    }

    /// The first live rule that `facts` match, in creation order; `Err`
    /// when one needs the stored transaction to decide.
    pub(super) fn first(&self, facts: &Facts) -> Result<Option<usize>, ()> {
        let live = |i: &&usize| self.installed[**i].live();
        if facts.complete {
            // Only rules naming no reference, or this one, can match.
            let named = facts
                .reference_no
                .as_deref()
                .and_then(|r| self.by_reference.get(r))
                .map_or(&[][..], Vec::as_slice);
            let (mut a, mut b) = (
                self.generic.iter().filter(live).peekable(),
                named.iter().filter(live).peekable(),
            );
            loop {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x < y => a.next(),
                    (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                    (Some(_), None) => a.next(),
                    (None, None) => return Ok(None),
                };
                let Some(&i) = next else {
                    return Ok(None);
                };
                if matches!(self.installed[i].rule.matching.against(facts), Verdict::Yes) {
                    return Ok(Some(i));
                }
            }
        }
        for (i, installed) in self.installed.iter().enumerate() {
            if !installed.live() {
                continue;
            }
            match installed.rule.matching.against(facts) {
                Verdict::No => {}
                Verdict::NeedsLookup => return Err(()),
                Verdict::Yes => return Ok(Some(i)),
            }
        }
        Ok(None)
    }
}
