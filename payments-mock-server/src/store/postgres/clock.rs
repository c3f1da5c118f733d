//! The shared clock's advances ([`Store::advance_clock`]): all of it or
//! nothing (`POST /_mock/clock/advance`, the console, and
//! `MockServer::advance_clock`), one statement on the row every replica
//! reads.

use super::*;

/// The clock's end: the offset is a `bigint` of nanoseconds.
const END: &str = "9223372036854775807";

impl PostgresStore {
    /// Moves the shared clock forward by `by` if it has room for all of
    /// it; otherwise moves nothing ([`NoRoom`]). The check and the add are
    /// one `UPDATE … WHERE offset_nanos <= end − by` under the row's lock:
    /// of racing advances on any replicas that only one fits, one moves
    /// the clock.
    ///
    /// # Errors
    ///
    /// [`StoreError`]: the database failed, or the sandbox was removed.
    pub(super) async fn advance_within(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        // Past `i64` nanoseconds no clock has room: nothing to update.
        let add = i64::try_from(by.as_nanos()).ok();
        bounded(async {
            let client = self.client().await?;
            // A refusal reads the offset after its `UPDATE` matched
            // nothing; a reset between the two makes room again, and the
            // advance is tried once more rather than refused with a room
            // it no longer has. A few tries: resets are rare.
            for _ in 0..4 {
                if let Some(add) = add {
                    let moved = if self.is_root() {
                        client
                            .query_opt(
                                &format!(
                                    "UPDATE mock_clock SET offset_nanos = offset_nanos + $1::bigint \
                                     WHERE id = 1 AND offset_nanos <= {END} - $1::bigint \
                                     RETURNING offset_nanos"
                                ),
                                &[&add],
                            )
                            .await
                    } else {
                        client
                            .query_opt(
                                &format!(
                                    "UPDATE mock_sandboxes SET offset_nanos = offset_nanos + $1::bigint \
                                     WHERE id = $2 AND offset_nanos <= {END} - $1::bigint \
                                     RETURNING offset_nanos"
                                ),
                                &[&add, &self.view.sandbox],
                            )
                            .await
                    }
                    .map_err(|e| store_error(&e))?;
                    if let Some(row) = moved {
                        return Ok(Ok(self.read_at(row.get(0))));
                    }
                }
                // Nothing moved: no room, or no sandbox (`offset` says
                // which).
                let offset = self.offset(&client).await?;
                if crate::domain::clock::advanced(offset, by).is_none() {
                    return Ok(Err(NoRoom {
                        offset_nanos: offset,
                    }));
                }
            }
            Err(StoreError::new(
                "the clock was reset under every try of an advance",
            ))
        })
        .await
    }

    /// The reading of an offset this replica just wrote, kept as its hint.
    fn read_at(&self, offset: i64) -> ClockReading {
        self.view.offset_hint.store(offset, Ordering::Relaxed);
        ClockReading {
            now: Clock::at_offset(offset),
            offset_nanos: offset,
        }
    }
}
