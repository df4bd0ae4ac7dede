// `mlepipe cache ls|gc|verify`: the node cache, apart from any one experiment.
import type { Command } from 'commander';
import type { IO } from '../io.js';
import type { Registrar } from './options.js';

export function registerCacheCommands(program: Command, { act }: Registrar, io: IO): void {
  const cache = program.command('cache').description('inspect and clean the node cache');
  cache
    .command('ls')
    .description('list cache entries and the experiments that use them')
    .option('--cache <dir>', 'cache root (default: from mlepipe.config.*, else ./.mlepipe)')
    .option('--json', 'JSON output')
    .action(
      act(async (o: { cache?: string; json?: boolean }) =>
        (await import('../commands/cache.js')).cacheLsCommand(o, io),
      ),
    );
  cache
    .command('gc')
    .description('remove entries no lock file references')
    .option('--cache <dir>', 'cache root')
    .option('--dry-run', 'only list what would go')
    .action(
      act(async (o: { cache?: string; dryRun?: boolean }) =>
        (await import('../commands/cache.js')).cacheGcCommand(o, io),
      ),
    );

  cache
    .command('verify')
    .description('hash every file of each entry (default: all) against its manifest; exit 1 when any is damaged')
    .argument('[keys...]', 'entry keys or prefixes, as cache ls shows them')
    .option('--cache <dir>', 'cache root')
    .option('--json', 'JSON output')
    .option('--repair', 'remove damaged entries (their nodes rebuild on the next run)')
    .action(
      act(async (keys: string[], o: { cache?: string; json?: boolean; repair?: boolean }) =>
        (await import('../commands/cache.js')).cacheVerifyCommand(keys, o, io),
      ),
    );
}
