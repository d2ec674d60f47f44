import { render } from 'preact';
import { App } from './app.tsx';
import { registerServiceWorker } from './push-notifications.ts';
import './styles.css';

registerServiceWorker();
render(<App />, document.getElementById('app') as HTMLElement);
