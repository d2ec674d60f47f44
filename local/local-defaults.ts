/** Events per second one local tenant may admit unless AEP_DEFAULT_EVENTS_PER_SECOND says otherwise (`npm start`, and the bench's overload stage). */
export const LOCAL_EVENTS_PER_SECOND = 200;
