/** The current time in epoch milliseconds; injected so the relay never reads the system clock itself. */
export type Clock = () => number;
