// Runs before `npm start`: installs the dependencies on a fresh checkout and
// checks for Java, which the embedded DynamoDB engine needs. Plain
// JavaScript, because nothing else is installed yet when it runs.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('node_modules/.bin/tsx')) {
  console.log('First start: installing dependencies (npm ci)…');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
}

const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
if (java.error) {
  console.error(
    'The local stack needs Java 17 or newer for its embedded DynamoDB engine.\n' +
      'On Debian or Ubuntu: sudo apt-get install -y openjdk-17-jre-headless',
  );
  process.exit(1);
}
