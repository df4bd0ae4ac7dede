// MLE-bench's leaderboard rule against hand-computed leaderboards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { humanRank, leaderboardScores, leaderboardThresholds, medalPositions, rankScore } from './leaderboard.js';

/** n teams scoring top - 1, top - 2, …: the score at position p is top - p. */
const descending = (n: number, top: number) => Array.from({ length: n }, (_, i) => top - (i + 1));
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

test('positions by number of teams, at the band edges', () => {
  assert.equal(medalPositions(1), [1, 1, 1]);
  assert.equal(medalPositions(5), [1, 1, 2]);
  assert.equal(medalPositions(50), [5, 10, 20]);
  assert.equal(medalPositions(99), [9, 19, 39]);
  assert.equal(medalPositions(100), [10, 20, 40]);
  assert.equal(medalPositions(249), [10, 49, 99]);
  assert.equal(medalPositions(250), [10, 50, 100]);
  assert.equal(medalPositions(999), [11, 50, 100]);
  assert.equal(medalPositions(1000), [12, 50, 100]);
  assert.equal(medalPositions(1500), [13, 75, 150]);
  assert.throws(() => medalPositions(0));
});

test('50, 150, 500 and 1500 teams, higher is better', () => {
  // 50 teams: gold at 5, silver at 10, bronze at 20; median (25th + 26th) / 2 = (75 + 74) / 2.
  assert.equal(leaderboardThresholds(descending(50, 100)), {
    gold_threshold: 95,
    silver_threshold: 90,
    bronze_threshold: 80,
    median_threshold: 74.5,
    is_lower_better: false,
    teams: 50,
  });
  // 150: gold at 10, silver at 30, bronze at 60; median (925 + 924) / 2.
  assert.equal(leaderboardThresholds(descending(150, 1000)), {
    gold_threshold: 990,
    silver_threshold: 970,
    bronze_threshold: 940,
    median_threshold: 924.5,
    is_lower_better: false,
    teams: 150,
  });
  // 500: gold at 10 + 1, silver at 50, bronze at 100; median (750 + 749) / 2.
  assert.equal(leaderboardThresholds(descending(500, 1000)), {
    gold_threshold: 989,
    silver_threshold: 950,
    bronze_threshold: 900,
    median_threshold: 749.5,
    is_lower_better: false,
    teams: 500,
  });
  // 1500: gold at 10 + 3, silver at 75, bronze at 150; median (1250 + 1249) / 2.
  assert.equal(leaderboardThresholds(descending(1500, 2000)), {
    gold_threshold: 1987,
    silver_threshold: 1925,
    bronze_threshold: 1850,
    median_threshold: 1249.5,
    is_lower_better: false,
    teams: 1500,
  });
});

test('lower is better when the first score is below the last; medals inclusive, above-median strict', () => {
  // 50 teams with errors 0.01, 0.02, …, 0.50.
  const th = leaderboardThresholds(Array.from({ length: 50 }, (_, i) => (i + 1) / 100));
  assert.is(th.is_lower_better, true);
  close(th.gold_threshold, 0.05);
  close(th.silver_threshold, 0.1);
  close(th.bronze_threshold, 0.2);
  close(th.median_threshold, 0.255);
  assert.equal(rankScore(0.05, th), { gold_medal: true, silver_medal: false, bronze_medal: false, above_median: true });
  assert.equal(rankScore(0.07, th), { gold_medal: false, silver_medal: true, bronze_medal: false, above_median: true });
  assert.equal(rankScore(0.2, th), { gold_medal: false, silver_medal: false, bronze_medal: true, above_median: true });
  assert.equal(rankScore(0.25, th), {
    gold_medal: false,
    silver_medal: false,
    bronze_medal: false,
    above_median: true,
  });
  assert.equal(rankScore(0.26, th).above_median, false);
  assert.equal(rankScore(null, th), {
    gold_medal: false,
    silver_medal: false,
    bronze_medal: false,
    above_median: false,
  });
});

test('ties on the leaderboard; a flat leaderboard counts as higher is better; 5-decimal comparison', () => {
  // 10 teams, the top four tied: gold at 1, silver at 2, bronze at 4 all read 0.9.
  const tied = [0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.4];
  const th = leaderboardThresholds(tied);
  assert.equal(
    [th.gold_threshold, th.silver_threshold, th.bronze_threshold, th.median_threshold],
    [0.9, 0.9, 0.9, 0.8],
  );
  assert.is(rankScore(0.9, th).gold_medal, true);
  // 0.899996 rounds to 0.9 at 5 decimals: gold; 0.899994 rounds to 0.89999: none.
  assert.is(rankScore(0.899996, th).gold_medal, true);
  assert.equal(rankScore(0.899994, th), {
    gold_medal: false,
    silver_medal: false,
    bronze_medal: false,
    above_median: true,
  });
  assert.is(rankScore(0.8, th).above_median, false, 'equal to the median is not above it');
  assert.is(leaderboardThresholds([0.5, 0.5, 0.5]).is_lower_better, false);
});

test('leaderboard.csv: the score column in file order; clear errors', () => {
  const csv =
    'scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore\n0.31,7,True,2020-01-01,0.31,True\n0.52,3,True,2020-01-02,0.52,True\n,9,True,2020-01-03,,False\n';
  const scores = leaderboardScores(csv, 'lb.csv');
  assert.equal(scores.slice(0, 2), [0.31, 0.52]);
  assert.ok(Number.isNaN(scores[2]));
  assert.throws(
    () => leaderboardScores('team,points\n1,2\n', 'lb.csv'),
    /lb\.csv: the leaderboard has no score column/,
  );
  assert.throws(() => leaderboardScores('score\n', 'lb.csv'), /no teams/);
});

test('HumanRank: 1 - (teams strictly better) / teams, in either direction', () => {
  const lb = [0.9, 0.8, 0.8, 0.7, NaN, 0.5]; // five scored teams
  assert.is(humanRank(0.95, lb, false), 1);
  assert.is(humanRank(0.9, lb, false), 1, 'a tie with the leader');
  assert.is(humanRank(0.8, lb, false), 1 - 1 / 5);
  assert.is(humanRank(0.75, lb, false), 1 - 3 / 5);
  assert.is(humanRank(0.1, lb, false), 0);
  assert.is(humanRank(null, lb, false), 0);
  // Errors 10, 20, 30, 40: 25 is beaten by two teams.
  assert.is(humanRank(25, [10, 20, 30, 40], true), 0.5);
  assert.ok(Number.isNaN(humanRank(1, [], false)));
});

test.run();
