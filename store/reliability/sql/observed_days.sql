-- Service dates of $first..$to on which any trip was seen (any mode, any feed): finalized days
-- by their stored counts, days not finalized by the live counts (live.ts). A day missing here is
-- one nobody recorded: before history began, a feed outage, archives not replayed yet. Past days
-- outside the live window are finalized before a rollup reads them when they have observations.
SELECT service_date
FROM (
  SELECT service_date, delivered + canceled + added AS seen
  FROM reliability_days
  WHERE service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
  UNION ALL
  SELECT service_date, delivered + canceled + added
  FROM reliability_live_days
  WHERE service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE)
    AND service_date NOT IN (
      SELECT service_date FROM reliability_finalized
      WHERE service_date BETWEEN CAST($first AS DATE) AND CAST($to AS DATE))
)
GROUP BY service_date
HAVING sum(seen) > 0
