// Ratings (issue 33): the account rates its done orders 1-5 on four scores with a comment, and changes it
// until editable_until (dispatch.order_rate, order.rating); the contractor sees its own aggregate only
// (contractor.ratings); the dispatch team's pool shows each contractor's (the directory's `ratings`).

import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { WORK_DONE_STATUSES } from "../../../src/domain/orders/statuses";
import { ApiProblem, get, post } from "../api";
import type { Order, OrderStatus } from "../types";

const SCORES = ["quality", "timeliness", "communication", "value"] as const;
type Score = (typeof SCORES)[number];
const SCORE_LABEL: Record<Score, string> = {
  quality: "Quality",
  timeliness: "Timeliness",
  communication: "Communication",
  value: "Value",
};

interface Rating extends Record<Score, number> {
  order_id: string;
  overall: number;
  comment: string | null;
  rated_at: string;
  updated_at: string;
  edits: number;
  editable_until: string;
}

/** count, the means of each score and of the overalls (null while none), the rating matching weighs. */
export interface RatingAggregate {
  count: number;
  means: (Record<Score, number> & { overall: number }) | null;
  matching_rating: number;
}

const DONE = new Set<OrderStatus>(WORK_DONE_STATUSES);

/** Whether an order's work is done, so that its account may rate it. */
export function rateable(order: Order): boolean {
  return DONE.has(order.status);
}

const when = (iso: string) =>
  new Date(iso).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });

/** The account's rating of a done order: read (404: none yet), then given or changed while it may be. */
export function OrderRating({ order }: { order: Order }) {
  const [rating, setRating] = useState<Rating | null | undefined>(undefined);
  const [closed, setClosed] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stale = false;
    get<Rating>(`/api/orders/${order.order_id}/rating`)
      .then((r) => !stale && setRating(r))
      .catch((err) => {
        if (stale) return;
        if (err instanceof ApiProblem && err.status === 404) setRating(null);
        else setError(err instanceof ApiProblem ? err.message : "The rating could not be loaded.");
      });
    return () => {
      stale = true;
    };
  }, [order.order_id]);
  if (rating === undefined) {
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading the rating…</p>
    );
  }
  const open = rating === null || (closed === null && Date.parse(rating.editable_until) > Date.now());
  return (
    <section class="rating card-inset" aria-label="Rating" data-rated={rating ? "true" : "false"}>
      <h3>{rating ? "Your rating" : "Rate this job"}</h3>
      {closed && (
        <p class="notice" role="status">
          {closed}
        </p>
      )}
      {open ? (
        <RatingForm
          order={order}
          rating={rating}
          onSaved={setRating}
          onClosed={(message) => setClosed(message)}
        />
      ) : (
        rating && <RatingReadOnly rating={rating} />
      )}
    </section>
  );
}

function RatingReadOnly({ rating }: { rating: Rating }) {
  return (
    <>
      <dl class="facts rating-facts">
        {SCORES.map((s) => (
          <Fragment key={s}>
            <dt>{SCORE_LABEL[s]}</dt>
            <dd data-score={s}>
              <Stars value={rating[s]} /> {rating[s]}/5
            </dd>
          </Fragment>
        ))}
        <dt>Overall</dt>
        <dd data-score="overall">{rating.overall.toFixed(2)}</dd>
        <dt>Comment</dt>
        <dd>{rating.comment ?? "—"}</dd>
      </dl>
      <p class="muted">
        Given {when(rating.rated_at)}
        {rating.edits > 0 && `, changed ${rating.edits} ${rating.edits === 1 ? "time" : "times"}`}. It could
        be changed until {when(rating.editable_until)}.
      </p>
    </>
  );
}

function Stars({ value }: { value: number }) {
  return (
    <span class="stars" aria-hidden="true">
      {"★".repeat(value)}
      <span class="stars-off">{"★".repeat(5 - value)}</span>
    </span>
  );
}

function RatingForm(props: {
  order: Order;
  rating: Rating | null;
  onSaved: (r: Rating) => void;
  onClosed: (message: string) => void;
}) {
  const { order, rating } = props;
  const [scores, setScores] = useState<Partial<Record<Score, number>>>(
    rating ? Object.fromEntries(SCORES.map((s) => [s, rating[s]])) : {},
  );
  const [comment, setComment] = useState(rating?.comment ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const complete = SCORES.every((s) => scores[s] !== undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!complete) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const trimmed = comment.trim();
      const answer = await post<Rating>("/api/dispatch/v1/orders/rate", {
        order_id: order.order_id,
        ...scores,
        ...(trimmed ? { comment: trimmed } : {}),
      });
      props.onSaved(answer);
      setSaved(
        `Saved: overall ${answer.overall.toFixed(2)}. You may change it until ${when(answer.editable_until)}.`,
      );
    } catch (err) {
      if (err instanceof ApiProblem && err.code === "rating_closed") {
        props.onClosed(
          `Your rating can no longer be changed: it could be until ${when(String(err.extra.editable_until ?? rating?.editable_until))}.`,
        );
      } else {
        setError(err instanceof ApiProblem ? err.message : "The rating did not go through; try again.");
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label={`Rate order ${order.order_id}`}>
      {SCORES.map((s) => (
        <ScoreInput
          key={s}
          name={`${s}-${order.order_id}`}
          label={SCORE_LABEL[s]}
          score={s}
          value={scores[s]}
          onChange={(v) => setScores({ ...scores, [s]: v })}
        />
      ))}
      <label for={`rating-comment-${order.order_id}`}>Comment (optional)</label>
      <textarea
        id={`rating-comment-${order.order_id}`}
        maxLength={2000}
        rows={2}
        value={comment}
        onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
      />
      {rating && (
        <p class="muted">
          You may change it until {when(rating.editable_until)}
          {rating.edits > 0 && ` (changed ${rating.edits} ${rating.edits === 1 ? "time" : "times"} so far)`}.
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
      <button type="submit" class="btn btn-primary" disabled={busy || !complete}>
        {rating ? "Save changes" : "Send rating"}
      </button>
    </form>
  );
}

/** One score, 1 to 5, as a group of radio buttons drawn as stars (arrow keys move between them). */
function ScoreInput(props: {
  name: string;
  label: string;
  score: Score;
  value: number | undefined;
  onChange: (v: number) => void;
}) {
  return (
    <fieldset class="score" data-score={props.score}>
      <legend>{props.label}</legend>
      <span class="score-stars">
        {[1, 2, 3, 4, 5].map((n) => (
          <label key={n} class={props.value !== undefined && n <= props.value ? "star-on" : ""}>
            <input
              type="radio"
              class="sr-only"
              name={props.name}
              value={n}
              checked={props.value === n}
              onChange={() => props.onChange(n)}
            />
            <span aria-hidden="true">★</span>
            <span class="sr-only">
              {n} {n === 1 ? "star" : "stars"}
            </span>
          </label>
        ))}
      </span>
      <span class="muted score-value">{props.value ? `${props.value}/5` : "not rated"}</span>
    </fieldset>
  );
}

/** A contractor's aggregate in one line: how many ratings, their overall mean, the matching rating. */
export function aggregateLine(r: RatingAggregate): string {
  if (r.count === 0 || r.means === null) return `no ratings yet · matching ${r.matching_rating.toFixed(2)}`;
  return `${r.count} ${r.count === 1 ? "rating" : "ratings"} · overall ${r.means.overall.toFixed(2)} · matching ${r.matching_rating.toFixed(2)}`;
}

/** The contractor's own aggregate (never who gave which): a small card on its phone. */
export function MyRatings() {
  const [agg, setAgg] = useState<RatingAggregate | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<RatingAggregate>("/api/contractor/v1/ratings")
      .then(setAgg)
      .catch((err) =>
        setError(err instanceof ApiProblem ? err.message : "Your ratings could not be loaded."),
      );
  }, []);
  return (
    <section class="card my-ratings" aria-labelledby="ratings-title">
      <h2 id="ratings-title">My ratings</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {agg === null ? (
        !error && <p class="muted">Loading…</p>
      ) : agg.count === 0 || agg.means === null ? (
        <p class="muted" data-count="0">
          No job of yours has been rated yet. Matching weighs you at {agg.matching_rating.toFixed(2)}.
        </p>
      ) : (
        <>
          <p data-count={agg.count}>
            <strong class="big-figure">{agg.means.overall.toFixed(2)}</strong> overall from {agg.count}{" "}
            {agg.count === 1 ? "rated job" : "rated jobs"}
          </p>
          <dl class="facts rating-facts">
            {SCORES.map((s) => (
              <Fragment key={s}>
                <dt>{SCORE_LABEL[s]}</dt>
                <dd data-score={s}>{(agg.means as Record<Score, number>)[s].toFixed(2)}</dd>
              </Fragment>
            ))}
            <dt>Matching weighs</dt>
            <dd data-score="matching">{agg.matching_rating.toFixed(2)}</dd>
          </dl>
          <p class="muted">The means of all your rated jobs; never who gave which.</p>
        </>
      )}
    </section>
  );
}
